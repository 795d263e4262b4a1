import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
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
 * Records 0..records-1 go round-robin to the topic's partitions. Two Kafka share consumers (KIP-932) of one group
 * read the topic and acknowledge every record explicitly: a value v with v % 7 == 3 is rejected, one with
 * v % 5 == 1 released on its first delivery, every other delivery accepted — a value with v % 11 == 4 accepted
 * after its lock was renewed (RENEW, KIP-1222) on its first delivery.
 * Prints one line per delivery, "DELIVERY consumer value deliveryCount action", then "DONE finished" once every
 * value was accepted or rejected (or "TIMEOUT" after the deadline).
 *
 * Usage: ShareConsumers bootstrap topic group records deadlineMs
 */
public class ShareConsumers {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int records = Integer.parseInt(args[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);

        Properties admin = new Properties();
        admin.put("bootstrap.servers", bootstrap);
        try (Admin a = Admin.create(admin)) {
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            a.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        }

        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        pp.put("linger.ms", "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            int partitions = producer.partitionsFor(topic).size();
            for (int v = 0; v < records; v++) {  // spread over every partition: each leader's share-partition works
                producer.send(new ProducerRecord<>(topic, v % partitions, null, Integer.toString(v)));
            }
            producer.flush();
        }

        KafkaShareConsumer<String, String>[] consumers = new KafkaShareConsumer[2];
        for (int i = 0; i < 2; i++) {
            Properties cp = new Properties();
            cp.put("bootstrap.servers", bootstrap);
            cp.put("group.id", group);
            cp.put("client.id", "share-" + i);
            cp.put("key.deserializer", StringDeserializer.class.getName());
            cp.put("value.deserializer", StringDeserializer.class.getName());
            cp.put("share.acknowledgement.mode", "explicit");
            cp.put("max.poll.records", "7");
            consumers[i] = new KafkaShareConsumer<>(cp);
            consumers[i].subscribe(Set.of(topic));
        }
        Set<Integer> finished = new TreeSet<>(), renewed = new TreeSet<>();
        try {
            while (finished.size() < records && System.currentTimeMillis() < deadline) {
                for (int i = 0; i < 2; i++) {
                    ConsumerRecords<String, String> polled = consumers[i].poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> r : polled) {
                        int v = Integer.parseInt(r.value());
                        short count = r.deliveryCount().orElse((short) -1);
                        AcknowledgeType ack = v % 7 == 3 ? AcknowledgeType.REJECT
                            : (v % 5 == 1 && count == 1) ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                        if (ack == AcknowledgeType.ACCEPT && v % 11 == 4 && renewed.add(v)) {
                            ack = AcknowledgeType.RENEW;  // KIP-1222: the consumer hands the record back later
                        }
                        consumers[i].acknowledge(r, ack);
                        if (ack != AcknowledgeType.RELEASE && ack != AcknowledgeType.RENEW) {
                            finished.add(v);
                        }
                        System.out.println("DELIVERY " + i + " " + v + " " + count + " " + ack);
                    }
                    if (!polled.isEmpty()) {
                        consumers[i].commitSync();
                    }
                }
            }
        } finally {
            for (KafkaShareConsumer<String, String> c : consumers) {
                c.close(Duration.ofSeconds(5));
            }
        }
        System.out.println(finished.size() == records ? "DONE " + finished.size() : "TIMEOUT " + finished);
    }
}
