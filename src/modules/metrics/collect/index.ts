/** Metrics collection: `createCollector(deps)` reads one tick of container and host samples per `collect()`. */
export { type Collector, type CollectorDeps, createCollector } from "./collector";
