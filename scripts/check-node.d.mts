export function requiredMajor(engines: string | undefined): number;
export function nodeProblem(
  version: string,
  engines: string | undefined,
  execPath: string,
): string | undefined;
