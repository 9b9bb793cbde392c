// A client on the ACP TypeScript SDK (@agentclientprotocol/sdk, unstable v1 entrypoint for
// session/fork) that drives an agent through one scenario and prints a JSON report: for each
// agent process it started (a scenario may start a second one to load a session), every
// message that agent wrote (the wire, as parsed JSON) and its exit code; and each step's
// result or error with the span of that agent's wire it covers ([from, to)).
//
//   node client.mjs SCENARIO CWD -- AGENT_COMMAND [ARGS...]
//
// As an editor, the client reads and writes files on disk and runs terminals as local
// processes (the editor scenarios advertise both), and answers permission questions with the
// option of kind `client.choice` ("cancelled" dismisses them).
// tests/acp/test_acp_ts_client.py runs it against `smith acp` and asserts on the report.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

const [scenario, cwd, dashes, command, ...args] = process.argv.slice(2);
if (!scenario || !cwd || dashes !== "--" || !command) {
  console.error("usage: node client.mjs SCENARIO CWD -- AGENT_COMMAND [ARGS...]");
  process.exit(2);
}

const agents = {};
let current = null;
const steps = [];
const client = { choice: "cancelled" };
const WAIT_MS = 30000;

// Each agent's stdout is read twice: parsed into its wire record here, and by the SDK while
// it is connected. The record reads on until the agent exits: the SDK stops reading when
// its connection closes, and an agent still writing then must not meet a closed pipe.
function output(child, record) {
  let pending = "";
  let connected = true;
  return new ReadableStream({
    start(controller) {
      child.stdout.on("data", (chunk) => {
        pending += chunk.toString("utf8");
        let newline;
        while ((newline = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim()) record.wire.push(JSON.parse(line));
        }
        record.waiters = record.waiters.filter((check) => !check());
        if (connected) controller.enqueue(new Uint8Array(chunk));
      });
      child.stdout.on("end", () => {
        if (connected) controller.close();
        connected = false;
      });
    },
    cancel() {
      connected = false;
    },
  });
}

// Starts the agent, connects the SDK's client to it for the span of `run(ctx)`, then closes
// its stdin and waits for it to exit.
async function agent(label, run) {
  const child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("close", resolve));
  const record = { wire: [], waiters: [], exit: null };
  agents[label] = record;
  current = record;
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), output(child, record));
  try {
    await app.connectWith(stream, run);
  } finally {
    child.stdin.end();
    record.exit = await exited;
    current = null;
  }
}

// The first message of the current agent's wire that `matches`, once it has come.
function waitFor(what, matches) {
  const record = current;
  return new Promise((resolve, reject) => {
    const found = () => {
      const message = record.wire.find(matches);
      if (message) resolve(message);
      return message !== undefined;
    };
    if (found()) return;
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
    record.waiters.push(() => found() && (clearTimeout(timer), true));
  });
}

const updateOf = (sessionId, kind) => (m) =>
  m.method === "session/update" &&
  m.params.sessionId === sessionId &&
  m.params.update.sessionUpdate === kind;

async function step(name, call) {
  const wire = current.wire;
  const from = wire.length;
  try {
    const result = await call();
    steps.push({ name, from, to: wire.length, result: result ?? null });
    return result;
  } catch (error) {
    const failed = { code: error.code, message: error.message, data: error.data };
    steps.push({ name, from, to: wire.length, error: failed });
    return undefined;
  }
}

const text = (words) => [{ type: "text", text: words }];

// The scenarios of one agent process, each given the SDK's client context.
const single = {
  // list / resume / close / fork, the model option and the updates that follow prompts.
  async sessions(ctx) {
    const init = await step("initialize", () =>
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        clientInfo: { name: "ts-sdk-test-client", version: "1" },
      }),
    );
    if (!init) return;
    const session = await step("new", () =>
      ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
    );
    const sid = session.sessionId;
    const prompt = (name, sessionId, words) =>
      step(name, () =>
        ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: text(words) }),
      );
    await prompt("prompt-1", sid, "first question");
    await step("set-model", () =>
      ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId: sid,
        configId: "model",
        value: "text-model",
      }),
    );
    await prompt("prompt-2", sid, "second question");
    await step("list", () => ctx.request(acp.methods.agent.session.list, { cwd }));
    const fork = await step("fork", () =>
      ctx.request("session/fork", {
        sessionId: sid,
        cwd,
        mcpServers: [],
        _meta: { smith: { beforePrompt: 2 } },
      }),
    );
    if (fork) await prompt("prompt-fork", fork.sessionId, "another second");
    await step("close", () => ctx.request(acp.methods.agent.session.close, { sessionId: sid }));
    await prompt("prompt-closed", sid, "still there?");
    await step("resume", () =>
      ctx.request(acp.methods.agent.session.resume, { sessionId: sid, cwd, mcpServers: [] }),
    );
    await prompt("prompt-resumed", sid, "third question");
  },

  // An image prompt on a model that takes images, then the same on one that does not.
  async images(ctx) {
    const image = { type: "image", mimeType: "image/png", data: process.env.TEST_IMAGE_PNG };
    const init = await step("initialize", () =>
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      }),
    );
    if (!init) return;
    const session = await step("new", () =>
      ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
    );
    const sessionId = session.sessionId;
    const pick = (name, value) =>
      step(name, () =>
        ctx.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: "model",
          value,
        }),
      );
    const ask = (name) =>
      step(name, () =>
        ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [...text("what is this?"), image],
        }),
      );
    await pick("pick-vision", "vision-model");
    await ask("prompt-image");
    await pick("pick-text", "text-model");
    await ask("prompt-refused");
  },
};

// An editor: files and terminals offered, permission questions answered "allow once".
const EDITOR = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

async function editorStart(ctx) {
  client.choice = "allow_once";
  return step("initialize", () =>
    ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: EDITOR,
      clientInfo: { name: "ts-sdk-test-editor", version: "1" },
    }),
  );
}

const newSession = async (ctx, name) =>
  (await step(name, () => ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })))
    .sessionId;
const say = (ctx, name, sessionId, words) =>
  step(name, () =>
    ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: text(words) }),
  );
const load = (ctx, name, sessionId) =>
  step(name, () =>
    ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }),
  );
const setOption = (ctx, name, sessionId, configId, value) =>
  step(name, () =>
    ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value }),
  );
const setMode = (ctx, name, sessionId, modeId) =>
  step(name, () => ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId }));

// The editor scenarios (tests/acp/test_acp_editor.py's, through this SDK): each may start a
// second agent process that loads the sessions the first one made.
const editor = {
  // Commands typed in the editor (each prompt's step is named by what was typed), then a
  // second session whose only turn fails at the LLM; a second process loads both.
  async commands() {
    const typed = [
      "/new",
      "/clear",
      "/load abc",
      "/quit",
      "/pager",
      "/memory open 1",
      "/help",
      "/role orchestrator",
      "/config set active_role direct",
      "/config unset active_role",
    ];
    let sid, failing;
    await agent("live", async (ctx) => {
      if (!(await editorStart(ctx))) return;
      sid = await newSession(ctx, "new");
      await step("advertised", () =>
        waitFor("available_commands_update", updateOf(sid, "available_commands_update")),
      );
      await say(ctx, "first question", sid, "first question");
      for (const words of typed) await say(ctx, words, sid, words);
      await say(ctx, "second question", sid, "second question");
      failing = await newSession(ctx, "new-failing");
      await setMode(ctx, "mode-yolo", failing, "yolo");
      await say(ctx, "hello", failing, "hello");
    });
    await agent("reload", async (ctx) => {
      if (!(await editorStart(ctx))) return;
      await load(ctx, "load", sid);
      await load(ctx, "load-failing", failing);
    });
  },

  // One turn asking to write a new file, edit one and run a command (in the terminal).
  async permissions() {
    await agent("live", async (ctx) => {
      if (!(await editorStart(ctx))) return;
      const sid = await newSession(ctx, "new");
      await say(ctx, "change things", sid, "change things");
    });
  },

  // A dispatch with a plan, a next turn, a turn cancelled mid-answer, a mode and role
  // switch and a write; a second process loads the session.
  async dispatch() {
    let sid;
    await agent("live", async (ctx) => {
      if (!(await editorStart(ctx))) return;
      sid = await newSession(ctx, "new");
      await setOption(ctx, "role-orchestrator", sid, "role", "orchestrator");
      await say(ctx, "where is the parser?", sid, "where is the parser?");
      await say(ctx, "thanks", sid, "thanks");
      const turn = say(ctx, "again", sid, "again");
      const answering = updateOf(sid, "agent_message_chunk");
      await waitFor("the stalled answer", (m) =>
        answering(m) && (m.params.update.content.text ?? "").includes("never"),
      );
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId: sid });
      await turn;
      await setMode(ctx, "mode-auto-edit", sid, "auto-edit");
      await setOption(ctx, "role-direct", sid, "role", "direct");
      await say(ctx, "write it", sid, "write it");
    });
    await agent("reload", async (ctx) => {
      if (!(await editorStart(ctx))) return;
      await load(ctx, "load", sid);
    });
  },
};

const scenarios = {
  ...Object.fromEntries(
    Object.entries(single).map(([name, run]) => [name, () => agent("agent", run)]),
  ),
  ...editor,
};
const run = scenarios[scenario];
if (!run) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}

// The editor's terminals: local processes, output (stdout and stderr) kept in order.
const terminals = new Map();
let terminalsMade = 0;

function createTerminal({ command: program, args: argv, env, cwd: where, outputByteLimit }) {
  const process_ = spawn(program, argv ?? [], {
    cwd: where ?? cwd,
    env: Object.fromEntries((env ?? []).map((v) => [v.name, v.value])),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const terminal = { process: process_, output: "", truncated: false, status: null };
  const keep = (chunk) => {
    terminal.output += chunk.toString("utf8");
    const limit = outputByteLimit ?? Infinity;
    while (Buffer.byteLength(terminal.output) > limit) {
      terminal.output = terminal.output.slice(1);
      terminal.truncated = true;
    }
  };
  process_.stdout.on("data", keep);
  process_.stderr.on("data", keep);
  terminal.exited = new Promise((resolve) => {
    const end = (status) => {
      terminal.status ??= status;
      resolve(terminal.status);
    };
    process_.on("close", (exitCode, signal) => end({ exitCode, signal }));
    process_.on("error", (error) => {
      terminal.output += String(error);
      end({ exitCode: 127, signal: null });
    });
  });
  const terminalId = `term-${++terminalsMade}`;
  terminals.set(terminalId, terminal);
  return { terminalId };
}

function killTerminal(terminal) {
  if (terminal.status === null) {
    try {
      process.kill(-terminal.process.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

const app = acp
  .client({ name: "ts-sdk-test-client" })
  .onNotification(acp.methods.client.session.update, () => {})
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    const option = params.options.find((o) => o.kind === client.choice);
    if (!option) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => ({
    content: await readFile(params.path, "utf8"),
  }))
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    await writeFile(params.path, params.content, "utf8");
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, ({ params }) => createTerminal(params))
  .onRequest(acp.methods.client.terminal.output, ({ params }) => {
    const terminal = terminals.get(params.terminalId);
    return {
      output: terminal.output,
      truncated: terminal.truncated,
      exitStatus: terminal.status,
    };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    const terminal = terminals.get(params.terminalId);
    return terminal.status ?? (await terminal.exited);
  })
  .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
    killTerminal(terminals.get(params.terminalId));
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, ({ params }) => {
    killTerminal(terminals.get(params.terminalId));
    terminals.delete(params.terminalId);
    return {};
  });

let failure = null;
try {
  await run();
} catch (error) {
  failure = String(error?.stack ?? error);
}
const wires = Object.fromEntries(
  Object.entries(agents).map(([label, { wire, exit }]) => [label, { wire, exit }]),
);
process.stdout.write(JSON.stringify({ steps, agents: wires, failure }) + "\n");
