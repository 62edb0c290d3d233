// JSON-RPC 2.0 over the server's /ws, with reconnect and backoff. The cookie set by /?token= authenticates it.

export class RpcError extends Error {
  constructor(code, message, data = {}) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];
const MAX_BACKOFF_MS = 10000;

export class Connection extends EventTarget {
  constructor() {
    super();
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.state = "connecting"; // connecting | open | reconnecting | unauthorized
    this.attempt = 0;
    this.timer = null;
  }

  get url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  start() {
    this.connect();
  }

  setState(state, detail = {}) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: { state, ...detail } }));
  }

  connect() {
    clearTimeout(this.timer);
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.retry();
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = async () => {
      opened = true;
      this.attempt = 0;
      try {
        const init = await this.call("initialize", {
          clientInfo: { name: "cowork-web", version: "1" },
        });
        this.setState("open", { init });
      } catch (err) {
        ws.close();
      }
    };
    ws.onmessage = (msg) => {
      let data;
      try {
        data = JSON.parse(msg.data);
      } catch {
        return;
      }
      for (const item of Array.isArray(data) ? data : [data]) this.handle(item);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const { reject } of this.pending.values()) reject(new RpcError("disconnected", "Connection to the server closed."));
      this.pending.clear();
      this.afterClose(opened);
    };
  }

  async afterClose(wasOpen) {
    // A refused WebSocket cannot tell us why; ask the server whether this browser holds the token.
    try {
      const res = await fetch("/auth/check", { credentials: "same-origin", cache: "no-store" });
      if (res.status === 401) {
        this.setState("unauthorized");
        return;
      }
    } catch {
      // The server is down: keep trying.
    }
    this.retry(wasOpen);
  }

  retry() {
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    const delay = Math.min(MAX_BACKOFF_MS, base + Math.random() * base * 0.3);
    this.attempt += 1;
    this.setState("reconnecting", { delay, attempt: this.attempt });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  handle(message) {
    if (message && typeof message.method === "string") {
      this.dispatchEvent(new CustomEvent("notification", { detail: { method: message.method, params: message.params || {} } }));
      return;
    }
    const entry = this.pending.get(message.id);
    if (!entry) return;
    this.pending.delete(message.id);
    if (message.error) {
      const data = message.error.data || {};
      entry.reject(new RpcError(data.code || "error", message.error.message || "error", data));
    } else {
      entry.resolve(message.result);
    }
  }

  call(method, params = {}) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RpcError("disconnected", "Not connected to the server."));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }
}
