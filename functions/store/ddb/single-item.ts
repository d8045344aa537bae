/** Helpers for single-item conditional writes (Put / Delete outside a transaction). */

/** A ConditionalCheckFailedException (a failed ConditionExpression of a single-item write). */
export function isConditionFailure(e: unknown): e is Error & { Item?: Record<string, unknown> } {
  return (e as Error)?.name === 'ConditionalCheckFailedException';
}
