// A client on the ACP TypeScript SDK (@agentclientprotocol/sdk, unstable v1 entrypoint for
// session/fork) that drives an agent through one scenario and prints a JSON report:
// every message the agent wrote (the wire, as parsed JSON) and each step's result or error.
//
//   node client.mjs SCENARIO CWD -- AGENT_COMMAND [ARGS...]
//
// tests/acp/test_acp_ts_client.py runs it against `smith acp` and asserts on the report.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

const [scenario, cwd, dashes, command, ...args] = process.argv.slice(2);
if (!scenario || !cwd || dashes !== "--" || !command) {
  console.error("usage: node client.mjs SCENARIO CWD -- AGENT_COMMAND [ARGS...]");
  process.exit(2);
}

const child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const wire = [];
let pending = "";
const tapped = new TransformStream({
  transform(chunk, controller) {
    pending += Buffer.from(chunk).toString("utf8");
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim()) wire.push(JSON.parse(line));
    }
    controller.enqueue(chunk);
  },
});
const stream = acp.ndJsonStream(
  Writable.toWeb(child.stdin),
  Readable.toWeb(child.stdout).pipeThrough(tapped),
);

const steps = [];
async function step(name, call) {
  try {
    const result = await call();
    steps.push({ name, result: result ?? null });
    return result;
  } catch (error) {
    steps.push({ name, error: { code: error.code, message: error.message, data: error.data } });
    return undefined;
  }
}

const text = (words) => [{ type: "text", text: words }];

const scenarios = {
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

const run = scenarios[scenario];
if (!run) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}

const app = acp
  .client({ name: "ts-sdk-test-client" })
  .onNotification(acp.methods.client.session.update, () => {})
  .onRequest(acp.methods.client.session.requestPermission, () => ({
    outcome: { outcome: "cancelled" },
  }));

let failure = null;
try {
  await app.connectWith(stream, run);
} catch (error) {
  failure = String(error?.stack ?? error);
}
child.stdin.end();
const code = await new Promise((resolve) => child.on("close", resolve));
process.stdout.write(JSON.stringify({ steps, wire, failure, agentExit: code }) + "\n");
