// Preloaded (node --require) into the MCP servers the Go tests run over
// HTTP: every server socket listens on 127.0.0.1 only, whatever host the
// server asks for (server-everything listens on every interface), and the
// port it got is written to stderr as "TACK_TEST_LISTENING <port>" so that
// PORT=0 can be used.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const cb = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  let opts;
  if (args.length > 0 && args[0] !== null && typeof args[0] === "object") {
    if (args[0].path) {
      return listen.call(this, ...args, ...(cb ? [cb] : []));
    }
    opts = { ...args[0], host: "127.0.0.1" };
  } else {
    opts = { port: args.length > 0 ? Number(args[0]) || 0 : 0, host: "127.0.0.1" };
  }
  this.once("listening", () => {
    process.stderr.write(`TACK_TEST_LISTENING ${this.address().port}\n`);
  });
  return cb ? listen.call(this, opts, cb) : listen.call(this, opts);
};
