// KafkaJS producer and group consumer against a kraftwire quorum.
// usage: node clients.js BROKERS TOPIC TAG COUNT GROUP   -> prints one JSON line {produced, consumed, offsets}
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [brokers, topic, tag, countText, groupId] = process.argv.slice(2);
  const count = parseInt(countText, 10);
  const kafka = new Kafka({ clientId: 'kraftwire-interop', brokers: brokers.split(','), logLevel: logLevel.WARN,
                            connectionTimeout: 10000, requestTimeout: 30000, retry: { retries: 8 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const offsets = [];
  const chunk = 500;
  for (let i = 0; i < count; i += chunk) {
    const messages = [];
    for (let j = i; j < Math.min(count, i + chunk); j++) {
      messages.push({ value: `${tag}-${String(j).padStart(6, '0')}` });
    }
    const res = await producer.send({ topic, acks: -1, messages });
    offsets.push(Number(res[0].baseOffset));
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const consumed = [];
  let committed = null;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${consumed.length} records`)), 120000);
    consumer.run({
      autoCommit: true,
      eachMessage: async ({ message }) => {
        const v = message.value.toString();
        if (v.startsWith(`${tag}-`)) consumed.push(v);
        if (consumed.length === count) {
          committed = Number(message.offset) + 1;
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.commitOffsets([{ topic, partition: 0, offset: String(committed) }]);
  const admin = kafka.admin();
  await admin.connect();
  const fetched = await admin.fetchOffsets({ groupId, topics: [topic] });
  await admin.disconnect();
  await consumer.disconnect();
  console.log(JSON.stringify({ produced: count, consumed, offsets, committed,
                               fetched: Number(fetched[0].partitions[0].offset) }));
}

main().catch((err) => { console.error(err && err.stack || String(err)); process.exit(1); });
