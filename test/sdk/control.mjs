// Calls the Query methods of the official Claude Agent SDK that send the
// control requests reaching into a running session, against the tack
// binary, for test/sdk/control_test.go.
//
//   node control.mjs <tack binary> <cwd> <MCP server script>
//
// One streaming session: a first prompt (the model starts a background
// Bash command), then, once its result is in, getContextUsage,
// generateSessionTitle, applyFlagSettings + getSettings, setMcpServers,
// toggleMcpServer, reconnectMcpServer, reloadPlugins (after writing a
// skill), stopTask (the background command). Prints one JSON object with
// each answer, or {"error": …} for the first call that threw.
import { query } from "@anthropic-ai/claude-agent-sdk";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [bin, cwd, mcpScript] = process.argv.slice(2);
if (!bin || !cwd || !mcpScript) {
  console.error("usage: node control.mjs <tack binary> <cwd> <MCP server script>");
  process.exit(2);
}

let endInput;
const inputDone = new Promise((resolve) => (endInput = resolve));
async function* input() {
  yield { type: "user", session_id: "", parent_tool_use_id: null, message: { role: "user", content: "start the server" } };
  await inputDone;
}

const stderr = [];
const q = query({
  prompt: input(),
  options: { pathToClaudeCodeExecutable: bin, cwd, permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true,
    stderr: (line) => stderr.push(line) },
});

const out = { stderr };
let taskId;
// The messages are read all along (leaving the loop would close the
// query); the calls start once the first result is in.
let firstResult;
const resulted = new Promise((resolve) => (firstResult = resolve));
const reading = (async () => {
  for await (const m of q) {
    if (m.type === "user" && m.tool_use_result?.backgroundTaskId) taskId = m.tool_use_result.backgroundTaskId;
    if (m.type === "result") firstResult();
  }
})();
try {
  await resulted;
  out.taskId = taskId;
  out.contextUsage = await q.getContextUsage({ detail: "summary" });
  out.title = await q.generateSessionTitle("the login page redirects forever", { persist: true });
  await q.applyFlagSettings({ permissions: { allow: ["Bash(touch *)"] } });
  out.settings = await q.getSettings();
  out.setServers = await q.setMcpServers({ everything: { type: "stdio", command: "node", args: [mcpScript, "stdio"] } });
  await q.toggleMcpServer("everything", false);
  out.statusOff = await q.mcpServerStatus();
  await q.toggleMcpServer("everything", true);
  await q.reconnectMcpServer("everything");
  out.statusOn = await q.mcpServerStatus();
  mkdirSync(join(cwd, ".claude", "skills", "rollback"), { recursive: true });
  writeFileSync(join(cwd, ".claude", "skills", "rollback", "SKILL.md"), "---\ndescription: Undo the last deploy\n---\nUndo it.\n");
  out.reloaded = await q.reloadPlugins();
  await q.stopTask(taskId);
  try {
    await q.stopTask("b0000000");
  } catch (e) {
    out.unknownStop = String(e.message ?? e);
  }
} catch (e) {
  out.error = String(e.stack ?? e);
}
endInput();
await reading.catch((e) => (out.error ??= String(e.stack ?? e)));
console.log(JSON.stringify(out));
