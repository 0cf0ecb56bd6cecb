import { Client } from "@langchain/langgraph-sdk";
import fs from "node:fs"; import { execSync } from "node:child_process";
const url = process.argv[2]; const graph = process.argv[3] ?? "chain"; const C = Number(process.argv[4] ?? 32); const N = Number(process.argv[5] ?? 320);
const client = new Client({ apiUrl: url });
const serverPid = Number(process.argv[6]);
const ticks = (pid) => { const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" "); return (Number(s[11]) + Number(s[12])) * 10; };
const dbName = process.argv[7];
const pgTotal = () => { let t = 0; for (const d of fs.readdirSync("/proc")) { if (!/^\d+$/.test(d)) continue; try { const st = fs.readFileSync(`/proc/${d}/stat`, "utf8"); if (!st.includes("(postgres)")) continue; if (dbName && !fs.readFileSync(`/proc/${d}/cmdline`, "utf8").includes(dbName)) continue; const s = st.split(") ")[1].split(" "); t += (Number(s[11]) + Number(s[12]) + Number(s[13]) + Number(s[14])) * 10; } catch {} } return t; };
const input = graph === "chain" ? { path: [] } : { messages: [{ role: "user", content: "add 2 and 3" }] };
async function one() { const t = await client.threads.create(); await client.runs.wait(t.thread_id, graph, { input }); }
for (let i = 0; i < 10; i++) await one();
const u0 = process.cpuUsage(); const s0 = ticks(serverPid); const p0 = pgTotal(); const t0 = Date.now();
let left = N; await Promise.all(Array.from({ length: C }, async () => { while (left-- > 0) await one(); }));
const wall = Date.now() - t0; const u = process.cpuUsage(u0);
console.log(`runs/s ${(N / wall * 1000).toFixed(1)}; per run ms: client ${((u.user + u.system) / 1000 / N).toFixed(2)} server ${((ticks(serverPid) - s0) / N).toFixed(2)} postgres ${((pgTotal() - p0) / N).toFixed(2)}`);
