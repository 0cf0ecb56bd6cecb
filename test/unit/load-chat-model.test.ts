import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ConfigError } from "../../src/errors.js";
import { createChatModel } from "../../src/model/create-chat-model.js";
import { loadChatModel } from "../../src/model/load-chat-model.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";

const dir = mkdtempSync(join(tmpdir(), "devmind-load-model-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadChatModel: the configured model, the OpenAI client loaded only for an OpenAI model", () => {
  it("builds the scripted model of DEVMIND_MODEL=scripted:PATH, as createChatModel does", async () => {
    const path = join(dir, "turns.json");
    writeFileSync(path, JSON.stringify([{ content: "hello" }]));
    const config = loadConfig({ DEVMIND_MODEL: `scripted:${path}` });
    const loaded = await loadChatModel(config);
    expect(loaded).toBeInstanceOf(ScriptedChatModel);
    expect(loaded.getName()).toBe(createChatModel(config).getName());
    expect((await loaded.invoke("hi")).content).toBe("hello");
  });

  it("builds ChatOpenAI for an OpenAI-compatible model", async () => {
    const config = loadConfig({ DEVMIND_MODEL: "openai:gpt-4o-mini", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    const loaded = await loadChatModel(config);
    expect(loaded).toBeInstanceOf(ChatOpenAI);
    expect((loaded as ChatOpenAI).model).toBe("gpt-4o-mini");
  });

  it("refuses what createChatModel refuses: no model, a missing script file", async () => {
    await expect(loadChatModel(loadConfig({}))).rejects.toBeInstanceOf(ConfigError);
    const missing = loadConfig({ DEVMIND_MODEL: `scripted:${join(dir, "nope.json")}` });
    await expect(loadChatModel(missing)).rejects.toThrow();
    expect(() => createChatModel(missing)).toThrow();
  });
});
