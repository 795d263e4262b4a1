import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One throughput run for benchmarks/share_bench.py. "produce": records of 100 bytes round-robin over the topic's
 * partitions (acks=all). "share": members KafkaShareConsumers of one share group (one thread each, explicit
 * acknowledgement, every record ACCEPTed, the acknowledgements carried by the next poll) until the acknowledgement
 * commit callback has reported every record acknowledged without error. "group": members KafkaConsumers of one
 * consumer group (commitSync after each poll) until every record was committed.
 *
 * Prints "FIRST ms" (the first record received) and "DONE ms count" (the last record acknowledged or committed), or
 * "TIMEOUT count".
 *
 * Usage: ShareBench bootstrap topic group produce|share|group members records deadlineMs
 */
public class ShareBench {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2], mode = args[3];
        int members = Integer.parseInt(args[4]);
        int records = Integer.parseInt(args[5]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[6]);
        if (mode.equals("produce")) {
            produce(bootstrap, topic, records);
            System.out.println("PRODUCED " + records);
            return;
        }
        AtomicLong first = new AtomicLong(0);
        Set<String> finished = ConcurrentHashMap.newKeySet();  // "partition:offset"
        if (mode.equals("share")) {
            Properties admin = new Properties();
            admin.put("bootstrap.servers", bootstrap);
            try (Admin a = Admin.create(admin)) {
                ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
                a.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
            }
        }
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            int id = i;
            Runnable body = mode.equals("share")
                ? () -> share(id, bootstrap, topic, group, records, deadline, first, finished)
                : () -> consumerGroup(id, bootstrap, topic, group, records, deadline, first, finished);
            Thread t = new Thread(body);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("FIRST " + first.get());
        System.out.println(finished.size() >= records ? "DONE " + lastDone + " " + finished.size()
            : "TIMEOUT " + finished.size());
        System.out.flush();
        System.exit(0);
    }

    static volatile long lastDone;

    static void produce(String bootstrap, String topic, int records) throws Exception {
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", ByteArraySerializer.class.getName());
        pp.put("value.serializer", ByteArraySerializer.class.getName());
        pp.put("acks", "all");
        pp.put("linger.ms", "5");
        byte[] value = new byte[100];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            int partitions = producer.partitionsFor(topic).size();
            for (int v = 0; v < records; v++) {
                producer.send(new ProducerRecord<>(topic, v % partitions, null, value));
            }
            producer.flush();
        }
    }

    static void finish(Set<String> finished, String key) {
        if (finished.add(key)) {
            lastDone = System.currentTimeMillis();
        }
    }

    static void share(int id, String bootstrap, String topic, String group, int records, long deadline,
                      AtomicLong first, Set<String> finished) {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("client.id", "share-" + id);
        cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("share.acknowledgement.mode", "explicit");
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(cp)) {
            consumer.setAcknowledgementCommitCallback((offsets, exception) -> {
                if (exception != null) {
                    return;
                }
                for (Map.Entry<TopicIdPartition, Set<Long>> e : offsets.entrySet()) {
                    for (long o : e.getValue()) {
                        finish(finished, e.getKey().partition() + ":" + o);
                    }
                }
            });
            consumer.subscribe(Set.of(topic));
            while (finished.size() < records && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    first.compareAndSet(0, System.currentTimeMillis());
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
            }
            consumer.commitSync(Duration.ofSeconds(5));
        }
    }

    static void consumerGroup(int id, String bootstrap, String topic, String group, int records, long deadline,
                              AtomicLong first, Set<String> finished) {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("client.id", "group-" + id);
        cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
            consumer.subscribe(Set.of(topic));
            while (finished.size() < records && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(100));
                if (polled.isEmpty()) {
                    continue;
                }
                first.compareAndSet(0, System.currentTimeMillis());
                consumer.commitSync();
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    finish(finished, r.partition() + ":" + r.offset());
                }
            }
        }
    }
}
