// The base step of anthropics/claude-code-action ("Run Claude Code Action",
// `bun run base-action/src/index.ts`), rebuilt in our own words for the Go
// test basestep_test.go: the action's source is not on npm, its runtime is
// (Bun, @anthropic-ai/claude-agent-sdk, @actions/core, shell-quote).
//
// What it does, step by step, as the action's base step does:
//  1. checks that credentials are set (ANTHROPIC_API_KEY or
//     CLAUDE_CODE_OAUTH_TOKEN);
//  2. merges INPUT_SETTINGS (inline JSON or a file) into
//     ~/.claude/settings.json, with enableAllProjectMcpServers: true;
//  3. writes the prompt (INPUT_PROMPT xor INPUT_PROMPT_FILE) to a file and
//     reads it back as the query's prompt;
//  4. turns the inputs into Agent SDK options: INPUT_CLAUDE_ARGS split like a
//     shell into extraArgs (--allowedTools/--disallowedTools values, which may
//     repeat, merged with INPUT_ALLOWED_TOOLS/INPUT_DISALLOWED_TOOLS;
//     --setting-sources taken out as settingSources, default user, project,
//     local), INPUT_MAX_TURNS, ANTHROPIC_MODEL, INPUT_FALLBACK_MODEL, the
//     claude_code system prompt preset (INPUT_SYSTEM_PROMPT replaces it,
//     INPUT_APPEND_SYSTEM_PROMPT appends to it), the process environment with
//     CLAUDE_CODE_ENTRYPOINT=claude-code-github-action and without the OIDC
//     token variables, and pathToClaudeCodeExecutable from
//     INPUT_PATH_TO_CLAUDE_CODE_EXECUTABLE;
//  5. runs query() until the result message, and writes every message as a
//     JSON array to $RUNNER_TEMP/claude-execution-<uuid>/claude-execution-output.json;
//  6. sets the step outputs conclusion, execution_file, session_id (from the
//     init message) and, with --json-schema, structured_output; a failed run
//     (no result, an error result, more turns than maxTurns) fails the step.
//
// Left out: plugin installation (INPUT_PLUGINS), the Bedrock/Vertex/Foundry
// and OrcaRouter set-ups, the prompt's second block from
// claude-user-request.txt, and the sanitised log printing.
import * as core from "@actions/core";
import { query } from "@anthropic-ai/claude-agent-sdk";
import type { Options, SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import { parse } from "shell-quote";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

// Flags whose values add up when repeated, and may be several words.
const listFlags = new Set(["allowedTools", "allowed-tools", "disallowedTools", "disallowed-tools", "mcp-config"]);

function requireCredentials(): void {
  if (!process.env.ANTHROPIC_API_KEY && !process.env.CLAUDE_CODE_OAUTH_TOKEN) {
    throw new Error("either ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN is required");
  }
}

async function readJSONObject(text: string, what: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not JSON: ${err}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

async function writeUserSettings(input: string | undefined): Promise<void> {
  const dir = join(homedir(), ".claude");
  const file = join(dir, "settings.json");
  await mkdir(dir, { recursive: true });
  let settings: Record<string, unknown> = {};
  if (existsSync(file)) {
    const old = (await readFile(file, "utf-8")).trim();
    if (old) settings = await readJSONObject(old, file);
  }
  const given = input?.trim();
  if (given) {
    const inline = given.startsWith("{") || given.startsWith("[");
    const text = inline ? given : await readFile(given, "utf-8");
    Object.assign(settings, await readJSONObject(text, inline ? "the settings input" : given));
  }
  settings.enableAllProjectMcpServers = true;
  await writeFile(file, JSON.stringify(settings, null, 2));
}

async function promptText(): Promise<string> {
  const inline = process.env.INPUT_PROMPT ?? "";
  const path = process.env.INPUT_PROMPT_FILE ?? "";
  if (inline && path) throw new Error("prompt and prompt_file are exclusive");
  if (!inline && !path) throw new Error("a prompt or a prompt_file is required");
  const text = path ? await readFile(path, "utf-8") : inline;
  // The action hands the CLI the prompt through a file it writes first.
  const copy = join(process.env.RUNNER_TEMP ?? ".", `claude-prompt-${Date.now()}.txt`);
  await writeFile(copy, text);
  return readFile(copy, "utf-8");
}

// splitArgs turns the claude_args input into extraArgs: --flag value, or
// --flag alone (null); list flags collect every following word.
function splitArgs(text: string | undefined): Record<string, string | null> {
  const words = parse((text ?? "").split("\n").filter((l) => !l.trim().startsWith("#")).join("\n"))
    .filter((w): w is string => typeof w === "string");
  const out: Record<string, string | null> = {};
  for (let i = 0; i < words.length; i++) {
    if (!words[i].startsWith("--")) continue;
    const flag = words[i].slice(2);
    const values: string[] = [];
    while (i + 1 < words.length && !words[i + 1].startsWith("--")) {
      values.push(words[++i]);
      if (!listFlags.has(flag)) break;
    }
    if (values.length === 0) out[flag] = null;
    else if (listFlags.has(flag) && out[flag]) out[flag] += "\0" + values.join("\0");
    else out[flag] = values.join("\0");
  }
  return out;
}

// takeList removes both spellings of a list flag from extra and returns
// their tools with those of the direct input, each once.
function takeList(extra: Record<string, string | null>, camel: string, kebab: string, direct?: string): string[] | undefined {
  const tools = [extra[camel], extra[kebab], direct]
    .filter((v): v is string => !!v)
    .flatMap((v) => v.split(/[\0,]/))
    .map((t) => t.trim())
    .filter(Boolean);
  delete extra[camel];
  delete extra[kebab];
  return tools.length ? [...new Set(tools)] : undefined;
}

function sdkOptions(): Options {
  const env = process.env;
  const extraArgs = splitArgs(env.INPUT_CLAUDE_ARGS);
  const allowedTools = takeList(extraArgs, "allowedTools", "allowed-tools", env.INPUT_ALLOWED_TOOLS);
  const disallowedTools = takeList(extraArgs, "disallowedTools", "disallowed-tools", env.INPUT_DISALLOWED_TOOLS);
  const sources = extraArgs["setting-sources"];
  delete extraArgs["setting-sources"];

  const childEnv: Record<string, string | undefined> = { ...env, CLAUDE_CODE_ENTRYPOINT: "claude-code-github-action" };
  delete childEnv.ACTIONS_ID_TOKEN_REQUEST_URL;
  delete childEnv.ACTIONS_ID_TOKEN_REQUEST_TOKEN;

  const systemPrompt: Options["systemPrompt"] = env.INPUT_SYSTEM_PROMPT
    ? env.INPUT_SYSTEM_PROMPT
    : { type: "preset", preset: "claude_code", ...(env.INPUT_APPEND_SYSTEM_PROMPT ? { append: env.INPUT_APPEND_SYSTEM_PROMPT } : {}) };

  return {
    model: env.ANTHROPIC_MODEL || undefined,
    fallbackModel: env.INPUT_FALLBACK_MODEL || undefined,
    maxTurns: env.INPUT_MAX_TURNS ? Number.parseInt(env.INPUT_MAX_TURNS, 10) : undefined,
    allowedTools,
    disallowedTools,
    systemPrompt,
    pathToClaudeCodeExecutable: env.INPUT_PATH_TO_CLAUDE_CODE_EXECUTABLE || undefined,
    extraArgs,
    env: childEnv,
    settingSources: (sources ? sources.split(",") : ["user", "project", "local"]) as Options["settingSources"],
  };
}

async function writeExecutionFile(messages: SDKMessage[]): Promise<string> {
  const dir = join(process.env.RUNNER_TEMP ?? "", `claude-execution-${randomUUID()}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, "claude-execution-output.json");
  await writeFile(file, JSON.stringify(messages, null, 2));
  return file;
}

// runQuery runs the query to its result and sets the step's outputs.
async function runQuery(prompt: string, options: Options): Promise<void> {
  const messages: SDKMessage[] = [];
  let result: SDKResultMessage | undefined;
  for await (const message of query({ prompt, options })) {
    messages.push(message);
    if (message.type === "result") {
      result = message;
      break; // nothing follows a result; the action does not wait for the end
    }
  }
  core.setOutput("execution_file", await writeExecutionFile(messages));
  const init = messages.find((m) => m.type === "system" && m.subtype === "init");
  if (init?.session_id) core.setOutput("session_id", init.session_id);

  if (!result) throw new Error("no result message came from the CLI");
  if (options.maxTurns !== undefined && result.num_turns > options.maxTurns && result.subtype === "success") {
    throw new Error(`the run took ${result.num_turns} turns, more than maxTurns ${options.maxTurns}`);
  }
  if (result.subtype !== "success" || result.is_error) {
    const errors = "errors" in result && result.errors?.length ? result.errors.join(", ") : `${result.subtype}, is_error ${result.is_error}`;
    throw new Error(`the run failed: ${errors}`);
  }
  if ("json-schema" in (options.extraArgs ?? {})) {
    if (!result.structured_output) throw new Error("--json-schema was given but the result has no structured_output");
    core.setOutput("structured_output", JSON.stringify(result.structured_output));
  }
  core.setOutput("conclusion", "success");
}

async function main(): Promise<void> {
  try {
    requireCredentials();
    await writeUserSettings(process.env.INPUT_SETTINGS);
    await runQuery(await promptText(), sdkOptions());
  } catch (err) {
    core.setFailed(`base step failed: ${err instanceof Error ? err.message : err}`);
    core.setOutput("conclusion", "failure");
    process.exit(1);
  }
}

await main();
