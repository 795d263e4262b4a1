import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's own transactional producer against a broker: three transactions of one transactional id (10 records and
 * offset 7 for group "g2" committed; 5 records and offset 3 aborted; 5 records committed), each record on partition
 * i % 3 of the topic. On a cluster that finalized transaction.version 2 the client speaks KIP-890 part 2 (Produce
 * v12, TxnOffsetCommit v5, EndTxn v5). Prints "done" at the end.
 *
 * Arguments: bootstrap servers, transactional id, topic.
 */
public class TxnV2Producer {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("transactional.id", args[1]);
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("linger.ms", "5");
        String topic = args[2];
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            run(producer, topic, "a", 10, 7, true);
            run(producer, topic, "b", 5, 3, false);
            run(producer, topic, "c", 5, -1, true);
        }
        System.out.println("done");
    }

    static void run(KafkaProducer<String, String> producer, String topic, String tag, int n, long offset,
                    boolean commit) throws Exception {
        producer.beginTransaction();
        for (int i = 0; i < n; i++) {
            producer.send(new ProducerRecord<>(topic, i % 3, null, tag + i)).get();
        }
        if (offset >= 0) {
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(offset)),
                                              new ConsumerGroupMetadata("g2"));
        }
        if (commit) {
            producer.commitTransaction();
        } else {
            producer.abortTransaction();
        }
    }
}
