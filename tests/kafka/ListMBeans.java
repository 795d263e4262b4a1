import java.lang.management.ManagementFactory;
import java.util.*;
import javax.management.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.serialization.*;

/** Lists the MBeans (and their attribute names) of an Apache Kafka node started in this JVM after a small
 * produce and consume, for config/jmx-exporter-rules.yaml: tests/kafka/mbeans-4.4.txt is its output, trimmed to the
 * domains the rules cover. Arguments: server.properties (formatted), bootstrap address. */
public class ListMBeans {
    public static void main(String[] a) throws Exception {
        String config = a[0]; String bootstrap = a[1];
        Thread t = new Thread(() -> kafka.Kafka.main(new String[]{config}));
        t.setDaemon(true); t.start();
        Properties p = new Properties(); p.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(p)) {
            for (int i = 0; i < 60; i++) { try { admin.describeCluster().nodes().get(); break; } catch (Exception e) { Thread.sleep(1000);} }
            admin.createTopics(List.of(new NewTopic("t1", 2, (short) 1))).all().get();
        }
        p.put("key.serializer", StringSerializer.class.getName()); p.put("value.serializer", StringSerializer.class.getName());
        try (Producer<String,String> prod = new KafkaProducer<>(p)) { for (int i = 0; i < 100; i++) prod.send(new ProducerRecord<>("t1", "k"+i, "v"+i)); prod.flush(); }
        Properties c = new Properties(); c.put("bootstrap.servers", bootstrap); c.put("group.id", "g1"); c.put("auto.offset.reset", "earliest");
        c.put("key.deserializer", StringDeserializer.class.getName()); c.put("value.deserializer", StringDeserializer.class.getName());
        try (Consumer<String,String> cons = new KafkaConsumer<>(c)) { cons.subscribe(List.of("t1")); for (int i=0;i<5;i++) cons.poll(java.time.Duration.ofMillis(1000)); cons.commitSync(); }
        Thread.sleep(2000);
        MBeanServer s = ManagementFactory.getPlatformMBeanServer();
        TreeSet<String> out = new TreeSet<>();
        for (ObjectName n : s.queryNames(null, null)) {
            String d = n.getDomain();
            if (!d.startsWith("kafka")) continue;
            StringBuilder sb = new StringBuilder(n.toString()).append(" :: ");
            for (MBeanAttributeInfo ai : s.getMBeanInfo(n).getAttributes()) sb.append(ai.getName()).append(",");
            out.add(sb.toString());
        }
        for (String l : out) System.out.println(l);
        System.exit(0);
    }
}
