// KafkaJS consumer group member against KRaft brokers: reads COUNT records of TOPIC in GROUP from the group's
// committed offsets (the beginning when none), commits them and leaves.
// usage: node group.js BROKERS TOPIC GROUP COUNT   -> prints one JSON line {values: [[partition, value], ...]}
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [brokers, topic, groupId, countText] = process.argv.slice(2);
  const count = parseInt(countText, 10);
  const kafka = new Kafka({ clientId: 'kraftwire-kafkajs', brokers: brokers.split(','), logLevel: logLevel.WARN,
                            connectionTimeout: 10000, requestTimeout: 30000, retry: { retries: 10 } });
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${values.length} of ${count} records`)), 120000);
    consumer.run({
      autoCommit: true,
      autoCommitThreshold: 1,
      eachMessage: async ({ partition, message }) => {
        values.push([partition, message.value.toString()]);
        if (values.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();  // commits what was consumed
  console.log(JSON.stringify({ values }));
}

main().catch((err) => { console.error(err && err.stack || String(err)); process.exit(1); });
