'use strict';
/**
 * {{NAME}}: an ONO 99 bot on the Node.js SDK (the arena's clients/node). Start here.
 *
 * choose(view) gets what this seat may know at its turn and returns one of view.legal, as
 * a token: "0" ... "10", "-10", "R", "P2" (modern), "DP", "H" (classic), "99". This one:
 * owing two cards, it deflects them when it can; otherwise it plays its highest number
 * card (the next seat has less room), and keeps the special cards for when nothing else
 * fits. The SDK's README describes the View, the Match and the hooks.
 */

// The SDK: the arena that runs this bot (check-bot, a match, a server it was uploaded to)
// names its copy in ONO99_NODE_SDK; run by hand, it is where this bot was made (its
// dependencies are installed once for the arena: npm ci --prefix clients/node).
const { Bot, run } = require(process.env.ONO99_NODE_SDK || {{SDK_JS}});

const DEFLECTORS = { modern: ['R', 'P2'], classic: ['R', 'H'], 'classic-set99': ['R', 'H'] };
const LAST_RESORT = ['P2', 'DP', 'R', 'H', '99', '-10'];
const isNumber = (card) => /^(10|[0-9])$/.test(card);

class StarterBot extends Bot {
  name = '{{NAME}}';

  choose(view) {
    const legal = view.legal;
    if (view.owed === 2) { // the first card of an owed pair: pass the pair on if we can
      for (const card of DEFLECTORS[view.match.rules.ruleset] || []) {
        if (legal.includes(card)) return card;
      }
    }
    const numbers = legal.filter(isNumber);
    if (numbers.length > 0) return numbers.reduce((a, b) => (Number(b) > Number(a) ? b : a));
    for (const card of LAST_RESORT) if (legal.includes(card)) return card;
    return legal[0];
  }
}

if (require.main === module) {
  run(new StarterBot(), process.argv.slice(2)).then((code) => process.exit(code));
}

module.exports = { StarterBot };
