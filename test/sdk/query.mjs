// Drives the tack binary with the official Claude Agent SDK's query(), for
// the Go interop tests of the stream-json protocol (test/sdk/sdk_test.go).
//
//   node query.mjs <scenario> <tack binary> <cwd>
//
// The model behind tack is the Go test's fake Messages API (tack reads
// ANTHROPIC_BASE_URL from the environment). Prints one JSON object:
//   {"messages": [every SDKMessage query() yielded],
//    "permissionCalls": [{toolName, input, toolUseID}],
//    "hookCalls": [{callbackInput, toolUseID}],
//    "described": {models, agents, commands, account} from the Query's
//                 supported*() and accountInfo() (allow scenario),
//    "error": "message of an exception, if query() threw"}
//
// Scenarios:
//   allow      a string prompt and an SDK agent; canUseTool allows every
//              call; the session is described through the initialize answer
//   deny-hook  a string prompt; a PreToolUse hook on Bash records its input,
//              canUseTool denies every call
//   hook-deny  a PreToolUse hook on Bash that denies the call (no canUseTool)
//   two-turns  streaming input: two user messages in one session
//   interrupt  streaming input: interrupt() once the model asked for a
//              (long) Bash call, then setModel("haiku") and a second message
//   resume     two queries: the second resumes the first's session by id
//   max-turns  maxTurns: 1 and a model that keeps calling tools
//   partial    includePartialMessages: stream_event messages
//   structured outputFormat json_schema: structured_output in the result
//   rewind     enableFileCheckpointing: after a turn that wrote a file,
//              rewindFiles() (a dry run, then for real) to before it
//   sdk-mcp    an in-process MCP server (createSdkMcpServer + tool()) whose
//              manifest the SDK sends with initialize
//   sdk-mcp-handshake  the same, without manifests: the MCP handshake runs
//              over mcp_message
//   managed    managedSettings (on the command line): a deny rule on Bash
//              under allowedTools and bypassPermissions, and keys that would
//              widen access (a hook, defaultMode, model)
//   managed-init  the same with managedSettingsDelivery: 'initialize'
//   project-config-root  projectConfigRoot: $PROJECT_CONFIG_ROOT, the
//              checkout cwd stands for
//   ask        canUseTool answers AskUserQuestion, as the Agent SDK documents:
//              allow, with updatedInput.answers keyed by question text (the
//              first option of each question; multi-select ones get all
//              their labels, comma-separated)
import { query, createSdkMcpServer, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const [scenario, bin, cwd] = process.argv.slice(2);
if (!scenario || !bin || !cwd) {
  console.error("usage: node query.mjs <scenario> <tack binary> <cwd>");
  process.exit(2);
}

const permissionCalls = [];
const hookCalls = [];
const stderr = [];

const base = {
  pathToClaudeCodeExecutable: bin,
  cwd,
  stderr: (line) => stderr.push(line),
};

function userMessage(text) {
  return { type: "user", session_id: "", parent_tool_use_id: null, message: { role: "user", content: text } };
}

function options() {
  switch (scenario) {
    case "allow":
      return {
        ...base,
        agents: { reviewer: { description: "Reviews changes", prompt: "You review changes." } },
        canUseTool: async (toolName, input, { toolUseID }) => {
          permissionCalls.push({ toolName, input, toolUseID });
          return { behavior: "allow", updatedInput: input };
        },
      };
    case "ask":
      return {
        ...base,
        canUseTool: async (toolName, input, { toolUseID }) => {
          permissionCalls.push({ toolName, input, toolUseID });
          if (toolName !== "AskUserQuestion") {
            return { behavior: "deny", message: "the test only answers questions" };
          }
          const answers = {};
          for (const q of input.questions) {
            answers[q.question] = q.multiSelect ? q.options.map((o) => o.label).join(", ") : q.options[0].label;
          }
          return { behavior: "allow", updatedInput: { ...input, answers } };
        },
      };
    case "deny-hook":
      return {
        ...base,
        canUseTool: async (toolName, input, { toolUseID }) => {
          permissionCalls.push({ toolName, input, toolUseID });
          return { behavior: "deny", message: "the test denies " + toolName };
        },
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [async (callbackInput, toolUseID) => {
              hookCalls.push({ callbackInput, toolUseID });
              return {};
            }],
          }],
        },
      };
    case "hook-deny":
      return {
        ...base,
        allowedTools: ["Bash"],
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [async (callbackInput, toolUseID) => {
              hookCalls.push({ callbackInput, toolUseID });
              return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny",
                permissionDecisionReason: "the hook forbids " + callbackInput.tool_input.command } };
            }],
          }],
        },
      };
    case "two-turns":
      return base;
    case "interrupt":
      return { ...base, allowedTools: ["Bash"] };
    case "resume":
      return base;
    case "max-turns":
      return { ...base, maxTurns: 1 };
    case "partial":
      return { ...base, includePartialMessages: true };
    case "rewind":
      return { ...base, enableFileCheckpointing: true, permissionMode: "acceptEdits" };
    case "sdk-mcp":
    case "sdk-mcp-handshake": {
      const add = tool("add", "Adds two numbers", { a: z.number(), b: z.number() },
        async ({ a, b }) => ({ content: [{ type: "text", text: `the sum is ${a + b}` }] }));
      return {
        ...base,
        mcpServers: { calc: createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] }) },
        allowedTools: ["mcp__calc__add"],
      };
    }
    case "project-config-root":
      return { ...base, projectConfigRoot: process.env.PROJECT_CONFIG_ROOT };
    case "structured":
      return {
        ...base,
        outputFormat: {
          type: "json_schema",
          schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      };
    case "managed":
    case "managed-init":
      return {
        ...base,
        allowedTools: ["Bash"],
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
        managedSettings: {
          permissions: { deny: ["Bash(echo *)"], defaultMode: "bypassPermissions" },
          hooks: { PreToolUse: [{ matcher: "", hooks: [{ type: "command", command: "touch hook-ran" }] }] },
          model: "haiku",
        },
        ...(scenario === "managed-init" && { managedSettingsDelivery: "initialize" }),
      };
    default:
      console.error("unknown scenario " + scenario);
      process.exit(2);
  }
}

const REWIND_UUID = "0d6f5c1e-8b4a-4c3e-9f2a-7e6d5c4b3a21";
let rewound;

// firstResult resolves when the first result arrives (interrupt scenario).
let resolveFirst;
const firstResult = new Promise((r) => { resolveFirst = r; });
let q;

function prompt() {
  switch (scenario) {
    case "two-turns":
      return (async function* () {
        yield userMessage("first question");
        yield userMessage("second question");
      })();
    case "rewind":
      return (async function* () {
        yield { ...userMessage("write the file"), uuid: REWIND_UUID };
        await firstResult;
        rewound = {
          dryRun: await q.rewindFiles(REWIND_UUID, { dryRun: true }),
          real: await q.rewindFiles(REWIND_UUID),
        };
      })();
    case "interrupt":
      return (async function* () {
        yield userMessage("wait a minute");
        await firstResult;
        await q.setModel("haiku");
        yield userMessage("are you there?");
      })();
    default:
      return "create the file";
  }
}

if (scenario === "sdk-mcp-handshake") {
  process.env.CLAUDE_AGENT_SDK_DISABLE_MCP_MANIFESTS = "1";
}

const messages = [];
let error;
let interrupted = false;
let described;
try {
  q = query({ prompt: prompt(), options: options() });
  for await (const m of q) {
    messages.push(m);
    if (scenario === "allow" && !described) {
      described = {
        models: await q.supportedModels(),
        agents: await q.supportedAgents(),
        commands: await q.supportedCommands(),
        account: await q.accountInfo(),
      };
    }
    if (scenario === "interrupt" && !interrupted && m.type === "assistant" &&
        m.message.content.some((b) => b.type === "tool_use")) {
      interrupted = true;
      await q.interrupt();
    }
    if (m.type === "result") {
      resolveFirst();
    }
  }
  if (scenario === "resume") {
    const first = messages.find((m) => m.type === "result");
    for await (const m of query({ prompt: "what did I say?", options: { ...base, resume: first.session_id } })) {
      messages.push(m);
    }
  }
} catch (e) {
  error = String(e && e.message ? e.message : e);
}
process.stdout.write(JSON.stringify({ messages, permissionCalls, hookCalls, described, rewound, error, stderr }) + "\n");
