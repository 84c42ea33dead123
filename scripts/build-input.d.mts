/** Types of ./build-input.mjs (a plain script, run by `node` before anything is built). */
export declare const INPUTS: readonly string[];
export declare function fingerprint(root?: string): string;
export declare function begin(root?: string): void;
export declare function end(root?: string): void;
export declare function fresh(root?: string): boolean;
