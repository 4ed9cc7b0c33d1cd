// Types of the talisman modules the matching uses (the package ships none).
declare module 'talisman/metrics/jaro-winkler.js' {
  /** Jaro-Winkler similarity in 0..1 (prefix scale 0.1, boost threshold 0.7). */
  const jaroWinkler: (a: string, b: string) => number;
  export default jaroWinkler;
}
