// An ACP client (on @agentclientprotocol/sdk) that runs one scenario
// against any ACP agent and prints what happened as one JSON object.
//
//   node client.mjs SCENARIO.json -- AGENT_COMMAND [ARGS...]
//
// The agent command is spawned with stdio pipes (stderr passes through), so
// the same script drives the Node adapters and a native agent alike. The
// scenario file:
//
//   {"cwd": "/abs/repo",
//    "mode": "default",
//    "steps": [{"prompt": "text",
//               "permission": "allow" | "allow_always" | "reject" | "cancel",
//               "cancelWhenFile": "name",
//               "newSession": true}]}
//
// mode, if given, is set with session/set_mode on every session the client
// opens, so that what needs permission does not depend on the mode an agent
// starts in (the 0.101 adapter starts in auto when the CLI says the model
// supports it). Each step is one session/prompt. A permission request is
// answered with the first option of the kind the step names (allow_once,
// allow_always, reject_once); "cancel" sends session/cancel instead and
// answers the request "cancelled", as ACP asks of a client that cancels.
// cancelWhenFile sends session/cancel once the named file exists in cwd (a
// tool the model ran created it), to cancel in the middle of a running tool.
// newSession runs the step in a session of its own (session/new again):
// after a cancel, what the agent left of the cancelled turn stays in its
// session.
//
// Progress goes to stderr line by line, so a test that gives up on a hung
// agent can say which step hung.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, watch } from "node:fs";
import { join, relative } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const optionKind = { allow: "allow_once", allow_always: "allow_always", reject: "reject_once" };

function log(...args) {
  process.stderr.write(`acp-client: ${args.join(" ")}\n`);
}

function parseArgs(argv) {
  const sep = argv.indexOf("--");
  if (sep !== 1 || argv.length < 3) {
    throw new Error("usage: node client.mjs SCENARIO.json -- AGENT_COMMAND [ARGS...]");
  }
  let scenario;
  try {
    scenario = JSON.parse(readFileSync(argv[0], "utf8"));
  } catch (err) {
    throw new Error(`reading the scenario ${argv[0]}: ${err.message}`);
  }
  if (typeof scenario.cwd !== "string" || !Array.isArray(scenario.steps)) {
    throw new Error(`scenario ${argv[0]}: want {"cwd": string, "steps": [...]}`);
  }
  return { scenario, command: argv.slice(2) };
}

// filesIn returns every regular file under dir (not .git) with its content.
function filesIn(dir) {
  const out = {};
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      if (name === ".git") continue;
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

// whenFileExists calls fn once dir/name exists, without polling; the
// returned function stops watching.
function whenFileExists(dir, name, fn) {
  const check = () => {
    if (existsSync(join(dir, name))) {
      watcher.close();
      fn();
    }
  };
  const watcher = watch(dir, check);
  check();
  return () => watcher.close();
}

// Turn records what one step saw.
class Turn {
  constructor(step) {
    this.step = step;
    this.record = {
      prompt: step.prompt,
      stopReason: null,
      error: null,
      text: "",
      thought: "",
      updates: {},
      toolCalls: [],
      permissions: [],
      cancelSent: false,
    };
  }

  onUpdate(update) {
    const r = this.record;
    const kind = update.sessionUpdate;
    r.updates[kind] = (r.updates[kind] ?? 0) + 1;
    if (kind === "agent_message_chunk" && update.content?.type === "text") r.text += update.content.text;
    if (kind === "agent_thought_chunk" && update.content?.type === "text") r.thought += update.content.text;
    if (kind === "tool_call") {
      r.toolCalls.push({ id: update.toolCallId, title: update.title, kind: update.kind ?? null, status: update.status ?? null });
    }
    if (kind === "tool_call_update") {
      const call = r.toolCalls.find((c) => c.id === update.toolCallId);
      if (call && update.status) call.status = update.status;
      if (call && update.title) call.title = update.title;
    }
  }
}

// Scenario runs one scenario over one connection to the agent.
class Scenario {
  constructor(scenario) {
    this.scenario = scenario;
    this.agent = null; // the connection's ClientContext, once connected
    this.turn = null;
    this.sessionId = null;
    this.summary = { initialize: null, sessions: [], steps: [], files: {}, agentExit: null };
  }

  // handlers registers the client's side of the protocol on app.
  handlers(app) {
    return app
      .onNotification(methods.client.session.update, (ctx) => {
        if (this.turn && ctx.params.sessionId === this.sessionId) this.turn.onUpdate(ctx.params.update);
      })
      .onRequest(methods.client.session.requestPermission, (ctx) => this.permission(ctx.params));
  }

  async permission(req) {
    const answer = this.turn?.step.permission ?? "reject";
    const entry = {
      toolCallId: req.toolCall.toolCallId,
      title: req.toolCall.title ?? null,
      kind: req.toolCall.kind ?? null,
      options: req.options.map((o) => o.kind),
      answer,
    };
    this.turn?.record.permissions.push(entry);
    log(`permission for ${entry.title}: ${answer}`);
    if (answer === "cancel") {
      await this.cancel();
      return { outcome: { outcome: "cancelled" } };
    }
    const option = req.options.find((o) => o.kind === optionKind[answer]);
    if (!option) {
      entry.answer = `no ${optionKind[answer]} option`;
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  }

  async cancel() {
    if (this.turn.record.cancelSent) return;
    this.turn.record.cancelSent = true;
    log("session/cancel");
    await this.agent.notify(methods.agent.session.cancel, { sessionId: this.sessionId });
  }

  async initialize() {
    const init = await this.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "tack-acp-test", version: "1.0.0" },
    });
    this.summary.initialize = {
      protocolVersion: init.protocolVersion,
      agentInfo: init.agentInfo ?? null,
      authMethods: (init.authMethods ?? []).map((m) => m.id),
      agentCapabilities: init.agentCapabilities ?? null,
    };
    log(`initialized ${JSON.stringify(this.summary.initialize.agentInfo)}`);
  }

  async newSession() {
    const { cwd, mode } = this.scenario;
    const session = await this.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    this.sessionId = session.sessionId;
    this.summary.sessions.push({
      sessionId: session.sessionId,
      models: session.models ?? null,
      modes: session.modes ?? null,
      configOptions: (session.configOptions ?? []).map((o) => ({ id: o.id, currentValue: o.currentValue })),
    });
    log(`session ${session.sessionId}`);
    if (!mode) return;
    const offered = (session.modes?.availableModes ?? []).map((m) => m.id);
    if (!offered.includes(mode)) throw new Error(`session/new offers the modes ${JSON.stringify(offered)}, not ${mode}`);
    await this.agent.request(methods.agent.session.setMode, { sessionId: session.sessionId, modeId: mode });
    log(`mode ${mode}`);
  }

  async step(i, step) {
    if (step.newSession && i > 0) await this.newSession();
    this.turn = new Turn(step);
    const r = this.turn.record;
    r.sessionId = this.sessionId;
    this.summary.steps.push(r);
    log(`step ${i}: prompt`);
    const unwatch = step.cancelWhenFile ? whenFileExists(this.scenario.cwd, step.cancelWhenFile, () => this.cancel()) : null;
    try {
      const res = await this.agent.request(methods.agent.session.prompt, {
        sessionId: this.sessionId,
        prompt: [{ type: "text", text: step.prompt }],
      });
      r.stopReason = res.stopReason;
    } catch (err) {
      r.error = err.message ?? String(err);
    }
    if (unwatch) {
      unwatch();
      if (!r.cancelSent) r.error ??= `${step.cancelWhenFile} never appeared`;
    }
    log(`step ${i}: ${r.stopReason ?? r.error}`);
  }

  async run() {
    await this.initialize();
    await this.newSession();
    for (const [i, step] of this.scenario.steps.entries()) await this.step(i, step);
  }
}

// startAgent spawns the agent command in the scenario's directory. It stays
// in the client's process group, so that whoever ends a hung client ends the
// agent (and the CLI it started) with it.
function startAgent(command, cwd) {
  const child = spawn(command[0], command.slice(1), { cwd, stdio: ["pipe", "pipe", "inherit"] });
  // A command that cannot be spawned never exits: its error stands for it.
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    child.on("error", (err) => resolve({ error: `spawning ${command[0]}: ${err.message}` }));
  });
  // Ends a run that is still going: the agent could not start, or it went
  // away in the middle.
  const failed = exited.then((e) => {
    throw new Error(e.error ?? `the agent exited early: ${JSON.stringify(e)}`);
  });
  failed.catch(() => {});
  return { child, exited, failed };
}

async function main() {
  const { scenario, command } = parseArgs(process.argv.slice(2));
  const { child, exited, failed } = startAgent(command, scenario.cwd);
  const run = new Scenario(scenario);
  const app = run.handlers(client({ name: "tack-acp-test" }));
  const conn = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  run.agent = conn.agent;
  try {
    await Promise.race([run.run(), failed]);
  } catch (err) {
    run.summary.error = err.message ?? String(err);
  }
  run.summary.files = filesIn(scenario.cwd);
  conn.close();
  child.stdin.end();
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  run.summary.agentExit = await exited;
  process.stdout.write(JSON.stringify(run.summary) + "\n");
}

main().catch((err) => {
  log(err.message ?? String(err));
  process.exit(2);
});
