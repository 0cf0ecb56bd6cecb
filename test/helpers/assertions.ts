import { expect } from "vitest";
import { DevmindError } from "../../src/errors.js";

/** Awaits `promise`, expects it to reject with a DevmindError and returns that error. */
export async function rejection(promise: Promise<unknown>): Promise<DevmindError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DevmindError);
    return error as DevmindError;
  }
  throw new Error("expected a rejection");
}
