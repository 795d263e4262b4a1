// KafkaJS admin against a KRaft node: create, describe, grow, configure and delete topics.
// usage: node admin.js BROKERS TOPIC   -> prints one JSON line with what each call saw
const { Kafka, logLevel } = require('kafkajs');

async function until(what, check) {
  for (let i = 0; i < 200; i++) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  const [brokers, topic] = process.argv.slice(2);
  const kafka = new Kafka({ clientId: 'kraftwire-admin', brokers: brokers.split(','), logLevel: logLevel.WARN,
                            connectionTimeout: 10000, requestTimeout: 30000, retry: { retries: 8 } });
  const admin = kafka.admin();
  await admin.connect();
  const out = {};
  out.created = await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1,
                                                      configEntries: [{ name: 'retention.ms', value: '1000' }] }],
                                           waitForLeaders: false });
  out.again = await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
  const md = await until('metadata', async () => {
    const m = await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => null);
    return m && m.topics[0].partitions.length === 3 ? m : null;
  });
  out.partitions = md.topics[0].partitions.map((p) => [p.partitionId, p.leader, p.replicas, p.isr]).sort();
  await admin.createPartitions({ topicPartitions: [{ topic, count: 5 }] });
  out.grown = (await until('growth', async () => {
    const m = await admin.fetchTopicMetadata({ topics: [topic] });
    return m.topics[0].partitions.length === 5 ? m : null;
  })).topics[0].partitions.length;
  const configs = await admin.describeConfigs({ includeSynonyms: false,
                                                resources: [{ type: 2, name: topic, configNames: ['retention.ms'] }] });
  out.retention = configs.resources[0].configEntries.map((e) => [e.configName, e.configValue]);
  out.listed = (await admin.listTopics()).includes(topic);
  await admin.deleteTopics({ topics: [topic] });
  out.deleted = await until('deletion', async () => !(await admin.listTopics()).includes(topic));
  await admin.disconnect();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
