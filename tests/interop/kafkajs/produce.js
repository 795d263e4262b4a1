// KafkaJS producer against a KRaft broker (consumer groups come with the group coordinator).
// usage: node produce.js BROKERS TOPIC TAG COUNT   -> prints one JSON line {offsets}
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [brokers, topic, tag, countText] = process.argv.slice(2);
  const count = parseInt(countText, 10);
  const kafka = new Kafka({ clientId: 'kraftwire-kafkajs', brokers: brokers.split(','), logLevel: logLevel.WARN,
                            connectionTimeout: 10000, requestTimeout: 30000, retry: { retries: 8 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const offsets = [];
  for (let i = 0; i < count; i++) {
    const res = await producer.send({ topic, acks: -1, messages: [{ key: `k${i}`, value: `${tag}-${i}` }] });
    offsets.push([res[0].partition, Number(res[0].baseOffset)]);
  }
  await producer.disconnect();
  console.log(JSON.stringify({ offsets }));
}

main().catch((err) => { console.error(err); process.exit(1); });
