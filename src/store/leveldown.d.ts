/**
 * The part of leveldown 6 (abstract-leveldown 7) that the store's guard uses; the package ships no
 * types. Keys and values pass through the guard untouched, so they stay `unknown` here.
 */
declare module 'leveldown' {
  namespace leveldown {
    type Callback = (error?: Error | null) => void;
    type ValueCallback = (error?: Error | null, value?: unknown) => void;
    type NextCallback = (error?: Error | null, key?: unknown, value?: unknown) => void;

    interface Operation {
      readonly type: 'put' | 'del';
      readonly key: unknown;
      readonly value?: unknown;
    }

    interface Iterator {
      next(callback: NextCallback): void;
      end(callback: Callback): void;
      seek(target: unknown): void;
    }

    interface LevelDown {
      readonly location: string;
      readonly status: string;
      open(options: object, callback: Callback): void;
      close(callback: Callback): void;
      get(key: unknown, options: object, callback: ValueCallback): void;
      put(key: unknown, value: unknown, options: object, callback: Callback): void;
      del(key: unknown, options: object, callback: Callback): void;
      batch(operations: ReadonlyArray<Operation>, options: object, callback: Callback): void;
      clear(options: object, callback: Callback): void;
      iterator(options: object): Iterator;
    }
  }

  interface LevelDownFactory {
    (location: string): leveldown.LevelDown;
    destroy(location: string, callback: leveldown.Callback): void;
  }

  const leveldown: LevelDownFactory;
  export = leveldown;
}
