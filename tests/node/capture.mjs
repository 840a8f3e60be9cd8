// Reports one error with the current @sentry/node, as a Node service would, and prints
// the event id the SDK returned. Usage: node capture.mjs <dsn> <message>
import * as Sentry from "@sentry/node";

const [dsn, message] = process.argv.slice(2);
Sentry.init({ dsn, environment: "staging", release: "ranker-gateway@2.4.0", debug: !!process.env.SENTRY_DEBUG });

function loadModel(path) {
  throw new Error(`${message}: ${path}`);
}

let eventId;
try {
  loadModel("/models/ranker-v3.onnx");
} catch (error) {
  eventId = Sentry.captureException(error);
}
const flushed = await Sentry.flush(10000);
console.log(JSON.stringify({ eventId, flushed }));
