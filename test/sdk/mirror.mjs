// Drives the tack binary through the Agent SDK's sessionStore and its
// truncating resume, for test/sdk/mirror_test.go.
//
//   node mirror.mjs <scenario> <tack binary> <cwd>
//
// Prints one JSON object: {"runs": [{messages, error}], "keys": [every
// SessionKey the store was given, in order], "entries": {key: entries}, …}.
//
// Scenarios:
//   store   a query with an InMemorySessionStore (tack gets --session-mirror);
//           then its local transcript is deleted and a second query resumes
//           the session from the store alone; a third forks it
//           (forkSession), from the store too
//   drops   one streaming query of three prompts with fixed uuids; then
//           resumeSessionAt the first answer with resumeDropsTurn the second
//           prompt (refused: the third is in the range), then
//           resumeSessionAt the second answer with resumeDropsTurn the
//           third prompt (accepted)
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { query, InMemorySessionStore } from "@anthropic-ai/claude-agent-sdk";

const [scenario, bin, cwd] = process.argv.slice(2);
if (!scenario || !bin || !cwd) {
  console.error("usage: node mirror.mjs <scenario> <tack binary> <cwd>");
  process.exit(2);
}

const stderr = [];
const base = {
  pathToClaudeCodeExecutable: bin,
  cwd,
  allowedTools: ["Bash"],
  stderr: (line) => stderr.push(line),
};

// RecordingStore is the SDK's in-memory store, remembering the keys it was
// given.
class RecordingStore extends InMemorySessionStore {
  keys = [];
  async append(key, entries) {
    const k = JSON.stringify(key);
    if (!this.keys.includes(k)) this.keys.push(k);
    return super.append(key, entries);
  }
  dump() {
    const out = {};
    // A copy: getEntries gives the store's own array, which later appends grow.
    for (const k of this.keys) out[k] = structuredClone(this.getEntries(JSON.parse(k)));
    return out;
  }
}

async function run(prompt, options, onResult) {
  const messages = [];
  try {
    for await (const m of query({ prompt, options })) {
      messages.push(m);
      if (m.type === "result") onResult?.(m);
    }
    return { messages };
  } catch (e) {
    return { messages, error: String(e?.message ?? e) };
  }
}

function user(text, uuid) {
  return { type: "user", uuid, session_id: "", parent_tool_use_id: null, message: { role: "user", content: text } };
}

async function* prompts(list) {
  for (const m of list) yield m;
}

const out = { runs: [], stderr };
switch (scenario) {
  case "store": {
    const store = new RecordingStore();
    // When the SDK yields the result, the store already holds the turn:
    // what the file holds at that moment.
    const atResult = {};
    const first = await run("run it", { ...base, sessionStore: store }, (m) => {
      const key = JSON.parse(store.keys[0]);
      const file = join(process.env.CLAUDE_CONFIG_DIR, "projects", key.projectKey, `${m.session_id}.jsonl`);
      atResult.store = structuredClone(store.getEntries(key));
      atResult.file = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    });
    out.atResult = atResult;
    out.runs.push(first);
    const init = first.messages.find((m) => m.type === "system" && m.subtype === "init");
    out.sessionId = init?.session_id;
    out.firstEntries = store.dump();
    // What the second run knows of the session comes from the store only.
    const key = JSON.parse(store.keys[0]);
    out.transcript = join(process.env.CLAUDE_CONFIG_DIR, "projects", key.projectKey, `${key.sessionId}.jsonl`);
    out.firstFile = readFileSync(out.transcript, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    rmSync(out.transcript);
    out.runs.push(await run("and again", { ...base, sessionStore: store, resume: out.sessionId }));
    out.runs.push(await run("forked", { ...base, sessionStore: store, resume: out.sessionId, forkSession: true }));
    out.keys = store.keys;
    out.entries = store.dump();
    break;
  }
  case "drops": {
    const ids = ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"];
    const first = await run(prompts([user("one", ids[0]), user("two", ids[1]), user("three", ids[2])]), base);
    out.runs.push(first);
    const answers = first.messages.filter((m) => m.type === "assistant").map((m) => m.uuid);
    const sid = first.messages.find((m) => m.type === "result")?.session_id;
    out.runs.push(await run("four", { ...base, resume: sid, resumeSessionAt: answers[0], resumeDropsTurn: ids[1] }));
    out.runs.push(await run("five", { ...base, resume: sid, resumeSessionAt: answers[1], resumeDropsTurn: ids[2] }));
    out.answers = answers;
    break;
  }
  default:
    console.error(`unknown scenario ${scenario}`);
    process.exit(2);
}
console.log(JSON.stringify(out));
