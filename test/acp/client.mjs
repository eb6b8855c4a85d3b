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
// opens, so that what needs permission does not depend on the mode an
// agent starts in (the 0.101 adapter starts in auto where the CLI says the
// model supports it). Each step is one session/prompt. A permission request is answered with the
// first option of the kind the step names (allow_once, allow_always,
// reject_once); "cancel" sends session/cancel instead and answers the request
// "cancelled", as ACP asks of a client that cancels. cancelWhenFile sends
// session/cancel once the named file exists in cwd (a tool the model ran
// created it), to cancel in the middle of a running tool. newSession runs
// the step in a session of its own (session/new again): a step after a
// cancel, in the cancelled session, sees what the agent left of it.
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

async function main() {
  const { scenario, command } = parseArgs(process.argv.slice(2));
  const child = spawn(command[0], command.slice(1), {
    cwd: scenario.cwd,
    // In the client's process group, so that whoever ends a hung client
    // ends the agent (and the CLI it started) with it.
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const spawnError = new Promise((_, reject) => child.on("error", (err) => reject(new Error(`spawning ${command[0]}: ${err.message}`))));

  let turn = null;
  let sessionId = null;
  let agentCx = null;
  const cancel = async () => {
    if (turn.record.cancelSent) return;
    turn.record.cancelSent = true;
    log("session/cancel");
    await agentCx.notify(methods.agent.session.cancel, { sessionId });
  };

  const app = client({ name: "tack-acp-test" })
    .onNotification(methods.client.session.update, (ctx) => {
      if (turn && ctx.params.sessionId === sessionId) turn.onUpdate(ctx.params.update);
    })
    .onRequest(methods.client.session.requestPermission, async (ctx) => {
      const req = ctx.params;
      const answer = turn?.step.permission ?? "reject";
      const entry = {
        toolCallId: req.toolCall.toolCallId,
        title: req.toolCall.title ?? null,
        kind: req.toolCall.kind ?? null,
        options: req.options.map((o) => o.kind),
        answer,
      };
      turn?.record.permissions.push(entry);
      log(`permission for ${entry.title}: ${answer}`);
      if (answer === "cancel") {
        await cancel();
        return { outcome: { outcome: "cancelled" } };
      }
      const option = req.options.find((o) => o.kind === optionKind[answer]);
      if (!option) {
        entry.answer = `no ${optionKind[answer]} option`;
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });

  const conn = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  agentCx = conn.agent;
  const summary = { initialize: null, sessions: [], steps: [], files: {}, agentExit: null };
  const newSession = async () => {
    const session = await agentCx.request(methods.agent.session.new, { cwd: scenario.cwd, mcpServers: [] });
    sessionId = session.sessionId;
    summary.sessions.push({
      sessionId,
      models: session.models ?? null,
      modes: session.modes ?? null,
      configOptions: (session.configOptions ?? []).map((o) => ({ id: o.id, currentValue: o.currentValue })),
    });
    log(`session ${sessionId}`);
    if (scenario.mode) {
      const offered = (session.modes?.availableModes ?? []).map((m) => m.id);
      if (!offered.includes(scenario.mode)) throw new Error(`session/new offers modes ${JSON.stringify(offered)}, not ${scenario.mode}`);
      await agentCx.request(methods.agent.session.setMode, { sessionId, modeId: scenario.mode });
      log(`mode ${scenario.mode}`);
    }
  };
  const run = async () => {
    const init = await agentCx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "tack-acp-test", version: "1.0.0" },
    });
    summary.initialize = {
      protocolVersion: init.protocolVersion,
      agentInfo: init.agentInfo ?? null,
      authMethods: (init.authMethods ?? []).map((m) => m.id),
      agentCapabilities: init.agentCapabilities ?? null,
    };
    log(`initialized ${JSON.stringify(summary.initialize.agentInfo)}`);
    await newSession();
    for (const [i, step] of scenario.steps.entries()) {
      if (step.newSession && i > 0) await newSession();
      turn = new Turn(step);
      turn.record.sessionId = sessionId;
      summary.steps.push(turn.record);
      log(`step ${i}: prompt`);
      const unwatch = step.cancelWhenFile ? whenFileExists(scenario.cwd, step.cancelWhenFile, cancel) : null;
      try {
        const res = await agentCx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: step.prompt }],
        });
        turn.record.stopReason = res.stopReason;
      } catch (err) {
        turn.record.error = err.message ?? String(err);
      }
      if (unwatch) {
        unwatch();
        if (!turn.record.cancelSent) turn.record.error ??= `${step.cancelWhenFile} never appeared`;
      }
      log(`step ${i}: ${turn.record.stopReason ?? turn.record.error}`);
    }
  };
  try {
    const early = exited.then((e) => {
      throw new Error(`the agent exited early: ${JSON.stringify(e)}`);
    });
    early.catch(() => {});
    spawnError.catch(() => {});
    await Promise.race([run(), spawnError, early]);
  } catch (err) {
    summary.error = err.message ?? String(err);
  }
  summary.files = filesIn(scenario.cwd);
  conn.close();
  child.stdin.end();
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  summary.agentExit = await exited;
  process.stdout.write(JSON.stringify(summary) + "\n");
}

main().catch((err) => {
  log(err.message ?? String(err));
  process.exit(2);
});
