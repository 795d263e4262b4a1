import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records 0..records-1 (acks=all, a few to a batch) go round-robin to the topic's partitions; then four Kafka share consumers
 * (KIP-932) of one group, one thread each, read the topic and acknowledge every record explicitly: a value v with
 * v % 10 == 7 is released on its first delivery, every other delivery accepted. Each consumer takes pauseMs per
 * record (so that a broker killed by the test lands mid-way).
 *
 * Prints "PRODUCED n", then one line per delivery, "DELIVERY consumer partition offset value deliveryCount action
 * timeMs", and, per record after the commitSync that carried its acknowledgement, "ACKED consumer value action
 * OK|exception-class timeMs". Ends with "DONE n" once every value's ACCEPT was acknowledged without error (or
 * "TIMEOUT missing-values" at the deadline).
 *
 * Usage: ShareKill bootstrap topic group records pauseMs deadlineMs lockMs [consumers]
 */
public class ShareKill {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int records = Integer.parseInt(args[3]);
        long pauseMs = Long.parseLong(args[4]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[5]);
        String lockMs = args[6];
        int consumers = args.length > 7 ? Integer.parseInt(args[7]) : 4;

        Properties admin = new Properties();
        admin.put("bootstrap.servers", bootstrap);
        try (Admin a = Admin.create(admin)) {
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            a.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms", lockMs), AlterConfigOp.OpType.SET))))
                .all().get();
        }

        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        pp.put("acks", "all");
        pp.put("linger.ms", "5");
        pp.put("batch.size", "200");  // a few records a batch: a fetch acquires whole batches, within its lock
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            int partitions = producer.partitionsFor(topic).size();
            for (int v = 0; v < records; v++) {
                producer.send(new ProducerRecord<>(topic, v % partitions, null, Integer.toString(v)));
            }
            producer.flush();
        }
        System.out.println("PRODUCED " + records);

        Set<Integer> done = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            int id = i;
            Thread t = new Thread(() -> consume(id, bootstrap, topic, group, records, pauseMs, deadline, done));
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        Set<Integer> missing = new TreeSet<>();
        for (int v = 0; v < records; v++) {
            if (!done.contains(v)) {
                missing.add(v);
            }
        }
        System.out.println(missing.isEmpty() ? "DONE " + records : "TIMEOUT " + missing);
        System.out.flush();
        System.exit(0);  // a consumer whose close timed out must not keep the program alive
    }

    static void consume(int id, String bootstrap, String topic, String group, int records, long pauseMs,
                        long deadline, Set<Integer> done) {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("client.id", "share-" + id);
        cp.put("key.deserializer", StringDeserializer.class.getName());
        cp.put("value.deserializer", StringDeserializer.class.getName());
        cp.put("share.acknowledgement.mode", "explicit");
        cp.put("max.poll.records", "10");
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(cp);
        consumer.subscribe(Set.of(topic));
        try {
            while (done.size() < records && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> polled = consumer.poll(Duration.ofMillis(100));
                List<String[]> acked = new ArrayList<>();
                for (ConsumerRecord<String, String> r : polled) {
                    int v = Integer.parseInt(r.value());
                    short count = r.deliveryCount().orElse((short) -1);
                    long received = System.currentTimeMillis();
                    AcknowledgeType ack = (v % 10 == 7 && count == 1) ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                    sleep(pauseMs);
                    consumer.acknowledge(r, ack);
                    System.out.println("DELIVERY " + id + " " + r.partition() + " " + r.offset() + " " + v + " " + count
                        + " " + ack.name() + " " + received);
                    acked.add(new String[] {Integer.toString(r.partition()), Integer.toString(v), ack.name()});
                }
                if (polled.isEmpty()) {
                    continue;
                }
                Map<TopicIdPartition, Optional<KafkaException>> results;
                try {
                    results = consumer.commitSync(Duration.ofSeconds(10));
                } catch (KafkaException e) {
                    results = Map.of();
                    System.out.println("COMMITFAILED " + id + " " + e.getClass().getSimpleName());
                }
                long now = System.currentTimeMillis();
                for (String[] a : acked) {
                    String outcome = "NONE";
                    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : results.entrySet()) {
                        if (Integer.toString(e.getKey().partition()).equals(a[0])) {
                            outcome = e.getValue().map(x -> x.getClass().getSimpleName()).orElse("OK");
                        }
                    }
                    if (outcome.equals("OK") && a[2].equals("ACCEPT")) {
                        done.add(Integer.parseInt(a[1]));
                    }
                    System.out.println("ACKED " + id + " " + a[1] + " " + a[2] + " " + outcome + " " + now);
                }
            }
        } catch (Exception e) {
            System.out.println("FAILED " + id + " " + e);
        } finally {
            consumer.close(Duration.ofSeconds(3));
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
