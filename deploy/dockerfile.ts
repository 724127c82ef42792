// The Dockerfiles of deploy/ as the tests read them as text (image-run.test.ts builds and runs one).
import { readFileSync } from 'node:fs';

export interface DockerfileInstruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined, comments and blank lines dropped. */
export function readDockerfile(path: string): DockerfileInstruction[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const instructions: DockerfileInstruction[] = [];
  let pending = '';
  for (const line of lines) {
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
    if (line.endsWith('\\')) continue;
    const [, keyword, args] = /^\s*(\w+)\s+(.*)$/.exec(pending) ?? [];
    if (!keyword) throw new Error(`cannot read Dockerfile line: ${pending}`);
    instructions.push({ keyword: keyword.toUpperCase(), args: args!.trim().replace(/\s+/g, ' ') });
    pending = '';
  }
  return instructions;
}

/** Instructions per build stage, keyed by the stage's name (or its number). */
export function stagesOf(
  instructions: DockerfileInstruction[],
): Map<string, DockerfileInstruction[]> {
  const result = new Map<string, DockerfileInstruction[]>();
  let current: DockerfileInstruction[] | undefined;
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const name = / AS (\S+)$/i.exec(instruction.args)?.[1] ?? String(result.size);
      current = [];
      result.set(name, current);
    }
    current?.push(instruction);
  }
  return result;
}
