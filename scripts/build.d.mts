export const STAMP: string;
export function staleReason(root?: string): string | undefined;
export function build(): number;
