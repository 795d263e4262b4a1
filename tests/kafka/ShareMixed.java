import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

/**
 * The Java half of tests/interop/librdkafka_share.py's mixed run: a KafkaShareConsumer (KIP-932) reading one topic in
 * one share group beside a librdkafka share consumer (librdkafka_share_consumer.c), acknowledging per record as it
 * does: a value v with v % 10 == 7 is RELEASEd on its first delivery, every other delivery ACCEPTed; commitSync after
 * each batch.
 *
 * Creates the topic (`partitions` partitions: with one, both consumers share it) and sets
 * share.auto.offset.reset=earliest on the group ("SETUP"); subscribes;
 * once the file `ready` exists and the group has two members with assignments, produces records 0..records-1
 * round-robin to the partitions ("PRODUCED n"). Prints per record after the commit that carried its acknowledgement
 * "ACKED value ACCEPT|RELEASE OK|exception-class partition offset deliveryCount"; stops when the file `stop` exists
 * or at the deadline; closes; then prints the group's start offsets (ListShareGroupOffsets): "START_OFFSETS
 * {partition=start/end}". Ends with "DONE".
 *
 * Usage: ShareMixed bootstrap topic group records ready-file stop-file deadlineMs partitions
 */
public class ShareMixed {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int records = Integer.parseInt(args[3]);
        File ready = new File(args[4]), stop = new File(args[5]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[6]);
        int partitions = Integer.parseInt(args[7]);

        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                .all().get();
            System.out.println("SETUP");
            System.out.flush();

            consume(admin, bootstrap, topic, group, records, ready, stop, deadline, partitions);
            startOffsets(admin, group, records, partitions);
        }
        System.out.println("DONE");
        System.out.flush();
        System.exit(0);  // a close that timed out must not keep the program alive
    }

    static void consume(Admin admin, String bootstrap, String topic, String group, int records, File ready, File stop,
                        long deadline, int partitions) throws Exception {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("client.id", "java-share");
        cp.put("key.deserializer", StringDeserializer.class.getName());
        cp.put("value.deserializer", StringDeserializer.class.getName());
        cp.put("share.acknowledgement.mode", "explicit");
        cp.put("max.poll.records", "10");
        boolean produced = false;
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(cp)) {
            consumer.subscribe(Set.of(topic));
            while (!stop.exists() && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> polled = consumer.poll(Duration.ofMillis(200));
                if (!produced && ready.exists() && bothAssigned(admin, group)) {
                    produce(bootstrap, topic, records, partitions);
                    produced = true;
                }
                List<Object[]> acked = new ArrayList<>();
                for (ConsumerRecord<String, String> r : polled) {
                    int v = Integer.parseInt(r.value());
                    short count = r.deliveryCount().orElse((short) -1);
                    AcknowledgeType ack = (v % 10 == 7 && count == 1)
                        ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                    consumer.acknowledge(r, ack);
                    acked.add(new Object[] {v, ack.name(), r.partition(), r.offset(), count});
                }
                if (acked.isEmpty()) {
                    continue;
                }
                Map<TopicIdPartition, Optional<KafkaException>> results;
                try {
                    results = consumer.commitSync(Duration.ofSeconds(30));
                } catch (KafkaException e) {
                    results = Map.of();
                    System.out.println("COMMITERROR " + e);
                }
                for (Object[] a : acked) {
                    String outcome = "NONE";
                    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : results.entrySet()) {
                        if (e.getKey().partition() == (int) a[2]) {
                            outcome = e.getValue().map(x -> x.getClass().getSimpleName()).orElse("OK");
                        }
                    }
                    System.out.println("ACKED " + a[0] + " " + a[1] + " " + outcome + " " + a[2] + " " + a[3] + " "
                        + a[4]);
                }
                System.out.flush();
            }
            consumer.close(Duration.ofSeconds(10));
        }
        if (!produced) {
            System.out.println("TIMEOUT the two consumers never both had assignments");
        }
    }

    /** Whether the group has two members, each with partitions; false while it does not exist yet (no member's
     * first heartbeat has arrived). */
    static boolean bothAssigned(Admin admin, String group) throws Exception {
        ShareGroupDescription d;
        try {
            d = admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return false;
            }
            throw e;
        }
        return d.members().size() == 2
            && d.members().stream().allMatch(m -> !m.assignment().topicPartitions().isEmpty());
    }

    static void produce(String bootstrap, String topic, int records, int partitions) throws Exception {
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        pp.put("acks", "all");
        pp.put("linger.ms", "5");
        pp.put("batch.size", "200");  // a few records a batch, so batches get split between the consumers
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int v = 0; v < records; v++) {
                producer.send(new ProducerRecord<>(topic, v % partitions, null, Integer.toString(v)));
            }
            producer.flush();
        }
        System.out.println("PRODUCED " + records);
        System.out.flush();
    }

    /** The group's persisted start offset of each partition, against the partition's end (records / partitions
     * each, one more for the first records % partitions): "START_OFFSETS {partition=start/end}". Kafka 4.4 persists a
     * start offset as it was before the acknowledgement that wrote it, so these may stay short of the end. */
    static void startOffsets(Admin admin, String group, int records, int partitions) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
            Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
        Map<Integer, String> seen = new TreeMap<>();
        for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : offsets.entrySet()) {
            int p = e.getKey().partition();
            long end = records / partitions + (p < records % partitions ? 1 : 0);
            seen.put(p, e.getValue().startOffset() + "/" + end);
        }
        System.out.println("START_OFFSETS " + seen);
    }
}
