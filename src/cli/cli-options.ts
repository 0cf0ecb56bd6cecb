import { InvalidArgumentError } from "commander";
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { ConfigError } from "../errors.js";

/**
 * A commander argument parser for an integer flag within [min, max]; anything else is a usage
 * error naming the flag (exit 2).
 */
export function integerOption(flag: string, min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${flag} must be an integer from ${min} to ${max}.`);
    }
    return Number(value);
  };
}

/** True when a person can be asked: stdin and stdout are both terminals. */
export function isInteractive(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/** Who the CLI records on decisions unless `--by` says: `cli:<login name>`. */
export function defaultPrincipal(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return "cli";
  }
}

/** Reads stdin to its end (the task of `devmind run` when no TASK argument is given). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** Options every command that prints a run accepts. */
export interface OutputOptions {
  json?: boolean;
  verbose?: boolean;
}

/**
 * Parses a JSON option given inline or as `@file` (read from that file): a ConfigError naming the
 * flag for unreadable files and malformed JSON (exit 2), with the parser's message.
 */
export function jsonOption(flag: string, text: string): unknown {
  let source = text;
  if (text.startsWith("@")) {
    const path = text.slice(1);
    try {
      source = readFileSync(path, "utf8");
    } catch (error) {
      throw new ConfigError(`${flag}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { variables: [flag] });
    }
  }
  try {
    return JSON.parse(source) as unknown;
  } catch (error) {
    throw new ConfigError(`${flag}: not valid JSON (${(error as Error).message})`, { variables: [flag] });
  }
}
