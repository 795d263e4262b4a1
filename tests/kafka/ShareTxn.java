import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * share.isolation.level (KIP-932): one transactional producer writes "aborted-0".."aborted-(n-1)" in a transaction
 * it aborts, then "committed-0".."committed-(n-1)" in one it commits. Two share consumers read the topic, each of
 * its own group (share.auto.offset.reset earliest): one group read_committed, the other read_uncommitted (the
 * default). Each consumer polls until it has seen every committed value (or the deadline), then once more.
 * Prints "VALUE group value deliveryCount" per record delivered, then "DONE".
 *
 * Usage: ShareTxn bootstrap topic committedGroup uncommittedGroup n deadlineMs
 */
public class ShareTxn {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        String[] groups = {args[2], args[3]};
        int n = Integer.parseInt(args[4]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[5]);

        Properties admin = new Properties();
        admin.put("bootstrap.servers", bootstrap);
        try (Admin a = Admin.create(admin)) {
            for (String group : groups) {
                String isolation = group.equals(groups[0]) ? "read_committed" : "read_uncommitted";
                a.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("share.isolation.level", isolation), AlterConfigOp.OpType.SET)
                ))).all().get();
            }
        }

        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("transactional.id", "share-txn");
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            producer.initTransactions();
            for (String tag : new String[]{"aborted", "committed"}) {
                producer.beginTransaction();
                for (int i = 0; i < n; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, tag + "-" + i));
                }
                producer.flush();
                if (tag.equals("aborted")) {
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }

        for (String group : groups) {
            Properties cp = new Properties();
            cp.put("bootstrap.servers", bootstrap);
            cp.put("group.id", group);
            cp.put("key.deserializer", StringDeserializer.class.getName());
            cp.put("value.deserializer", StringDeserializer.class.getName());
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(cp)) {
                consumer.subscribe(Set.of(topic));
                Set<String> committed = new TreeSet<>();
                boolean last = false;
                while (System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        if (r.value().startsWith("committed-")) {
                            committed.add(r.value());
                        }
                        System.out.println("VALUE " + group + " " + r.value() + " " + r.deliveryCount().orElse((short) -1));
                    }
                    consumer.commitSync();
                    if (last) {
                        break;
                    }
                    last = committed.size() == n;
                }
            }
        }
        System.out.println("DONE");
    }
}
