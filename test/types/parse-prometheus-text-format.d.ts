declare module 'parse-prometheus-text-format' {
  /** Metric families as prom2json prints them. */
  export default function parsePrometheusTextFormat(text: string): {
    name: string;
    help: string;
    type: string;
    metrics: {
      value?: string;
      labels?: Record<string, string>;
      buckets?: Record<string, string>;
      count?: string;
      sum?: string;
    }[];
  }[];
}
