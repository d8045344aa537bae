/**
 * aws-local-stepfunctions calls Promise.withResolvers (Node >= 22); local runs and tests
 * here use Node 20. Imported for its effect by whatever runs the state machine locally.
 */
if (typeof (Promise as unknown as { withResolvers?: unknown }).withResolvers !== 'function') {
  (Promise as unknown as { withResolvers: unknown }).withResolvers = <T>() => {
    let resolve!: (v: T | PromiseLike<T>) => void;
    let reject!: (r?: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
export {};
