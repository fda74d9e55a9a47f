// Building the page's elements. Every text goes in as a text node, never as HTML: bot
// names, details and files come from outside, and none of them may become markup. Nor may
// their invisible characters turn a line around (a bidi override: "\u202egnp.exe" shows as
// "exe.png"): those are written as escapes, as the terminal's viewer writes them
// (arena.text.printable). A record opened from a file reaches the page unchecked.

// Controls, format characters (bidi overrides, zero-width ones), separators but the
// space, unassigned and private code points: what Python's str.isprintable refuses.
const UNPRINTABLE = /(?! )[\p{C}\p{Z}]/gu;

const hex = (n, width) => n.toString(16).padStart(width, "0");
const SHORT = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };

export function printable(text) {
  return String(text).replace(UNPRINTABLE, (c) => {
    if (SHORT[c]) return SHORT[c];
    const n = c.codePointAt(0);
    return n < 0x100 ? `\\x${hex(n, 2)}` : n < 0x10000 ? `\\u${hex(n, 4)}` : `\\U${hex(n, 8)}`;
  });
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : printable(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(printable(child)));
  }
  return node;
}

// Replace a node's children.
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

export const $ = (selector) => document.querySelector(selector);
