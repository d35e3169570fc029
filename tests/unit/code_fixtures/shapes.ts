// A fixture for tests/unit/test_code_grammars.py: every kind TypeScript has.
export const API_URL: string = "https://example.invalid";
export type Handler<T> = (value: T) => void;

export interface Shape {
  area(): number;
  readonly name: string;
}

export enum Color {
  Red = "red",
  Green = "green",
}

export abstract class Base<T> implements Shape {
  static readonly MAX = 3;
  handler = (value: T): void => {};

  abstract area(): number;

  get name(): string {
    return "base";
  }
}

namespace Outer.Inner {
  export const DEPTH = 2;
  export function helper(): void {}
}

declare module "virtual" {
  export function load(id: string): Promise<void>;
}

export function overloaded(a: string): string;
export function overloaded(a: number): number;
export function overloaded(a: unknown): unknown {
  return a;
}

export const compute = async <T,>(input: T): Promise<T> => input;
