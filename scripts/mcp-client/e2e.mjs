// End-to-end check of `agentmem serve` with the official MCP TypeScript SDK
// client (pinned in package.json). cmd/agentmem's TestMCPClientEndToEnd runs
// it; by hand:
//
//   node e2e.mjs stdio TAG -- agentmem serve --transport stdio --user me --store sqlite:/tmp/m.db
//   node e2e.mjs http TAG http://127.0.0.1:8787/ KEY
//   node e2e.mjs unauthorized http://127.0.0.1:8787/ WRONG-KEY
//
// stdio and http connect, list the tools, subscribe to memory:///TAG.md,
// write it (and wait for the change notification), read it back as a tool
// and as a resource, search for TAG, list the resources, delete the file,
// then write a file secret-TAG.md that stays, and check that no file of any
// other run's TAG (AGENTMEM_E2E_ABSENT, comma-separated tags) is visible:
// not listed, not found by search, not readable. They print one JSON
// object of results on stdout. unauthorized expects the server to refuse
// the key with HTTP 401. Any failure exits non-zero with the reason on
// stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

function fail(msg) {
  throw new Error(msg);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

// call invokes a tool and returns its structured result; a tool error fails
// unless allowError.
async function call(client, name, args, allowError = false) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError && !allowError) fail(`${name}(${JSON.stringify(args)}): tool error ${JSON.stringify(res.structuredContent ?? res.content)}`);
  return { isError: !!res.isError, value: res.structuredContent };
}

// withTimeout rejects when p takes longer than ms (a bounded wait, never a sleep).
function withTimeout(p, ms, what) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms); }),
  ]);
}

async function session(client, tag) {
  const out = {};
  const updates = [];
  let notify;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
    if (notify) notify(n.params.uri);
  });

  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  out.tools = tools;
  for (const t of ["delete_memory", "read_memory", "search_memory", "write_memory"]) {
    check(tools.includes(t), `tools/list lacks ${t}: ${tools}`);
  }

  const file = `${tag}.md`;
  const uri = `memory:///${file}`;
  await client.subscribeResource({ uri });
  const heard = new Promise((resolve) => { notify = (u) => { if (u === uri) resolve(u); }; });
  const content = `- ${tag} likes green tea`;
  const w = await call(client, "write_memory", { file: tag, content });
  check(w.value.file === file && w.value.status === "created", `write_memory: ${JSON.stringify(w.value)}`);
  out.write = w.value;
  out.notification = await withTimeout(heard, 20000, `notifications/resources/updated for ${uri}`);

  const r = await call(client, "read_memory", { file });
  check(JSON.stringify(r.value).includes(`${tag} likes green tea`), `read_memory: ${JSON.stringify(r.value)}`);
  out.read = r.value;

  const res = await client.readResource({ uri });
  check(res.contents.length === 1 && res.contents[0].text.includes(`${tag} likes green tea`), `resources/read ${uri}: ${JSON.stringify(res)}`);
  out.resource = res.contents[0];

  const s = await call(client, "search_memory", { query: tag });
  const found = (s.value.matches ?? []).map((m) => m.file);
  check(found.includes(file), `search_memory ${tag}: ${JSON.stringify(s.value)}`);
  out.search = s.value;

  const listed = (await client.listResources()).resources.map((x) => x.uri);
  check(listed.includes(uri), `resources/list lacks ${uri}: ${listed}`);
  out.resources = listed;

  const snap = await client.readResource({ uri: "memory:///snapshot" });
  check(snap.contents[0].text.includes(file), `memory:///snapshot does not list ${file}: ${snap.contents[0].text}`);

  const d = await call(client, "delete_memory", { file });
  check(d.value.status === "deleted", `delete_memory: ${JSON.stringify(d.value)}`);
  out.delete = d.value;
  const gone = await call(client, "read_memory", { file }, true);
  check(gone.isError, `read_memory after delete: ${JSON.stringify(gone.value)}`);

  // A file that stays, for the other user's run to look for in vain.
  await call(client, "write_memory", { file: `secret-${tag}`, content: `- secret of ${tag}` });

  const absent = (process.env.AGENTMEM_E2E_ABSENT ?? "").split(",").filter(Boolean);
  const after = (await client.listResources()).resources.map((x) => x.uri);
  for (const other of absent) {
    check(!after.some((u) => u.includes(other)), `resources/list shows ${other}'s file: ${after}`);
    const os = await call(client, "search_memory", { query: other });
    check(!(os.value.matches ?? []).some((m) => m.file.includes(other) || m.snippet.includes(other)),
      `search_memory finds ${other}'s file: ${JSON.stringify(os.value)}`);
    const or = await call(client, "read_memory", { file: `secret-${other}.md` }, true);
    check(or.isError, `read_memory reads ${other}'s file: ${JSON.stringify(or.value)}`);
  }
  out.absent = absent;
  out.updates = updates;
  return out;
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const client = new Client({ name: "agentmem-e2e", version: "0.0.0" });
  if (mode === "unauthorized") {
    const [url, key] = rest;
    const t = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
    try {
      await client.connect(t);
    } catch (err) {
      const msg = String(err?.message ?? err);
      check(err?.code === 401, `connect with a wrong key failed, but not with HTTP 401 (code ${err?.code}): ${msg}`);
      console.log(JSON.stringify({ unauthorized: true, status: err.code, error: msg }));
      return;
    }
    await client.close();
    fail("connect with a wrong key succeeded");
  }
  const tag = rest[0];
  check(tag && /^[a-z0-9-]+$/.test(tag), `TAG must be lower-case letters, digits and '-', got ${tag}`);
  let transport;
  if (mode === "stdio") {
    check(rest[1] === "--", "usage: e2e.mjs stdio TAG -- COMMAND ARGS...");
    const [command, ...args] = rest.slice(2);
    transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  } else if (mode === "http") {
    const [, url, key] = rest;
    transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  } else {
    fail(`unknown mode ${mode}: want stdio, http or unauthorized`);
  }
  await client.connect(transport);
  try {
    const out = await session(client, tag);
    out.transport = mode;
    out.server = client.getServerVersion();
    console.log(JSON.stringify(out));
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`e2e.mjs: ${err?.stack ?? err}`);
    process.exit(1);
  },
);
