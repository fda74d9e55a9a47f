// One stream of the spectator service, relayed by the web viewer over a WebSocket, that
// comes back by itself: after a drop it reconnects (waiting longer each time, up to a
// few seconds), and the new stream starts with a fresh snapshot, so whoever renders it
// starts again from that and is in sync.

const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 5000;

export class Feed {
  // ``path``: "/ws/match/ID", "/ws/tv", ...; ``onMessage(message)`` gets each message
  // of the stream; ``onTrouble(text)`` a line to show while it is away (null: back).
  constructor(path, { onMessage, onTrouble }) {
    this.path = path;
    this.onMessage = onMessage;
    this.onTrouble = onTrouble;
    this.finished = false;   // the stream ended for good (a match over): no reconnecting
    this.stopped = false;
    this.failures = 0;
    this.lastError = null;
    this.timer = null;
    this.connect();
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}${this.path}`);
    this.socket = socket;
    socket.onmessage = (event) => {
      if (this.stopped) return;
      const message = JSON.parse(event.data);
      if (message.error !== undefined) {
        this.lastError = message.error;
        if (!message.retry) this.finished = true;
        this.onTrouble(message.error, message.retry);
        return;
      }
      this.failures = 0;
      this.lastError = null;
      this.onTrouble(null);
      this.onMessage(message);
    };
    socket.onclose = () => {
      if (this.stopped || this.finished || socket !== this.socket) return;
      const wait = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** this.failures++);
      this.onTrouble(`${this.lastError ?? "the web viewer does not answer"}; trying again in ` +
                     `${(wait / 1000).toFixed(1)} s`, true);
      this.timer = setTimeout(() => this.connect(), wait);
    };
  }

  // The stream has said all it will (its match is over): a close is no longer a drop.
  finish() {
    this.finished = true;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket.close();
  }
}
