import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * Kafka's Java clients (producer, consumer, admin) doing one scenario per call, for tests against kraftwire: each
 * prints what it saw as JSON lines ({@code {"event": ..., ...}}) for the test to check, and asserts nothing itself.
 *
 * <ul>
 * <li>{@code produce BOOTSTRAP TOPIC N}: an idempotent producer (acks=all) sends N keyed records; one "sent" line per
 *     record (partition, offset).</li>
 * <li>{@code transactions BOOTSTRAP TOPIC TXN_ID}: a transactional producer commits "committed-0..4", aborts
 *     "aborted-0..4", commits "committed-5..9".</li>
 * <li>{@code consume BOOTSTRAP TOPIC GROUP PROTOCOL ISOLATION N}: one consumer (group.protocol PROTOCOL, isolation
 *     ISOLATION) reads until it has N records or 30 s pass, commits, and prints each record.</li>
 * <li>{@code group BOOTSTRAP TOPIC GROUP PROTOCOL N}: two consumers in one group read until together they have every
 *     one of the N records and split the partitions between them, commit, and print their assignments and the
 *     group as {@code Admin.describeConsumerGroups} sees it then.</li>
 * <li>{@code admin BOOTSTRAP TOPIC GROUP}: the Admin calls one after another, each result a line.</li>
 * </ul>
 * {@code --config FILE} before the mode adds FILE's properties (a secured listener's) to every client's.
 */
public final class KafkaClients {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration STEP = Duration.ofSeconds(30);

    /** The properties of {@code --config FILE}, for every client of this call. */
    private static Properties common = new Properties();

    public static void main(String[] argv) throws Exception {
        String[] args = argv;
        common = new Properties();
        if (args[0].equals("--config")) {
            try (java.io.FileInputStream in = new java.io.FileInputStream(args[1])) {
                common.load(in);
            }
            args = java.util.Arrays.copyOfRange(args, 2, args.length);
        }
        switch (args[0]) {
            case "produce": produce(args[1], args[2], Integer.parseInt(args[3])); break;
            case "transactions": transactions(args[1], args[2], args[3]); break;
            case "consume": consume(args[1], args[2], args[3], args[4], args[5], Integer.parseInt(args[6])); break;
            case "group": group(args[1], args[2], args[3], args[4], Integer.parseInt(args[5])); break;
            case "admin": admin(args[1], args[2], args[3]); break;
            default: throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static void print(String event, Map<String, Object> fields) throws Exception {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("event", event);
        line.putAll(fields);
        synchronized (System.out) {
            System.out.println(JSON.writeValueAsString(line));
        }
    }

    private static Map<String, Object> fields(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    private static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.putAll(common);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return p;
    }

    private static void produce(String bootstrap, String topic, int n) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) sent.add(producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)));
            producer.flush();
            for (int i = 0; i < n; i++) {
                RecordMetadata md = sent.get(i).get(STEP.toMillis(), TimeUnit.MILLISECONDS);
                print("sent", fields("value", "v" + i, "partition", md.partition(), "offset", md.offset()));
            }
        }
    }

    private static void transactions(String bootstrap, String topic, String txnId) throws Exception {
        Properties p = producerProps(bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            String[][] plan = {{"committed", "0", "commit"}, {"aborted", "0", "abort"}, {"committed", "5", "commit"}};
            for (String[] step : plan) {
                producer.beginTransaction();
                int first = Integer.parseInt(step[1]);
                for (int i = first; i < first + 5; i++) {
                    producer.send(new ProducerRecord<>(topic, "k" + i, step[0] + "-" + i));
                }
                producer.flush();  // the records are written, so that an abort has something to abort
                if (step[2].equals("commit")) producer.commitTransaction();
                else producer.abortTransaction();
                print(step[2], fields("values", step[0] + "-" + first + ".." + (first + 4)));
            }
        }
    }

    private static Properties consumerProps(String bootstrap, String group, String protocol, String isolation) {
        Properties p = new Properties();
        p.putAll(common);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return p;
    }

    private static void consume(String bootstrap, String topic, String group, String protocol, String isolation, int n)
            throws Exception {
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(consumerProps(bootstrap, group, protocol, isolation))) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            long deadline = System.currentTimeMillis() + STEP.toMillis();
            while (seen < n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    seen++;
                    print("record", fields("partition", r.partition(), "offset", r.offset(), "key", r.key(),
                                           "value", r.value()));
                }
            }
            consumer.commitSync();
            print("committed", fields("offsets", offsets(consumer.committed(consumer.assignment()))));
        }
    }

    private static Map<String, Long> offsets(Map<TopicPartition, OffsetAndMetadata> committed) {
        Map<String, Long> out = new TreeMap<>();
        committed.forEach((tp, om) -> out.put(tp.toString(), om == null ? null : om.offset()));
        return out;
    }

    private static List<String> names(Collection<TopicPartition> partitions) {
        return partitions.stream().map(TopicPartition::toString).sorted().collect(Collectors.toList());
    }

    private static void group(String bootstrap, String topic, String group, String protocol, int n) throws Exception {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        Map<String, Set<TopicPartition>> assigned = new ConcurrentHashMap<>();
        AtomicBoolean done = new AtomicBoolean();
        Map<String, Throwable> failed = new ConcurrentHashMap<>();
        int partitions;
        try (Admin admin = admin(bootstrap)) {
            partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
        }
        List<Thread> threads = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            Properties p = consumerProps(bootstrap, group, protocol, "read_uncommitted");
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "consumer-" + name);
            threads.add(new Thread(() -> {
                try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
                    consumer.subscribe(List.of(topic));
                    while (!done.get()) {
                        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                            seen.add(r.partition() + ":" + r.offset());
                        }
                        assigned.put(name, new HashSet<>(consumer.assignment()));
                    }
                    consumer.commitSync();
                    print("member", fields("client", "consumer-" + name, "assignment", names(consumer.assignment()),
                                           "committed", offsets(consumer.committed(consumer.assignment()))));
                } catch (Throwable t) {
                    failed.put(name, t);
                }
            }, "consumer-" + name));
        }
        threads.forEach(Thread::start);
        long deadline = System.currentTimeMillis() + 2 * STEP.toMillis();
        while (System.currentTimeMillis() < deadline && failed.isEmpty()) {
            Set<TopicPartition> a = assigned.getOrDefault("a", Set.of());
            Set<TopicPartition> b = assigned.getOrDefault("b", Set.of());
            Set<TopicPartition> both = new HashSet<>(a);
            both.addAll(b);
            if (!a.isEmpty() && !b.isEmpty() && both.size() == a.size() + b.size() && both.size() == partitions
                    && seen.size() >= n) {
                break;
            }
            Thread.sleep(50);
        }
        try (Admin admin = admin(bootstrap)) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            List<Map<String, Object>> members = new ArrayList<>();
            for (MemberDescription m : d.members()) {
                members.add(fields("client", m.clientId(), "assignment", names(m.assignment().topicPartitions())));
            }
            print("described", fields("state", d.groupState().toString(), "type", d.type().toString(),
                                      "members", members));
        }
        done.set(true);
        for (Thread t : threads) t.join(STEP.toMillis());
        if (!failed.isEmpty()) {
            failed.values().iterator().next().printStackTrace();
        }
        print("seen", fields("records", seen.size(), "failed", failed.keySet()));
    }

    private static void admin(String bootstrap, String topic, String group) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1).configs(Map.of("retention.ms", "3600000"))))
                    .all().get();
            print("createTopics", fields("topic", topic));

            TopicDescription td = settled(
                    () -> admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic),
                    d -> d.partitions().stream().allMatch(p -> p.leader() != null));
            List<Map<String, Object>> parts = new ArrayList<>();
            for (TopicPartitionInfo p : td.partitions()) {
                parts.add(fields("partition", p.partition(), "leader", p.leader().id(),
                                 "replicas", p.replicas().stream().map(Node::id).collect(Collectors.toList()),
                                 "isr", p.isr().stream().map(Node::id).collect(Collectors.toList())));
            }
            print("describeTopics", fields("name", td.name(), "internal", td.isInternal(),
                                           "topicId", td.topicId().toString(), "partitions", parts));

            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            print("describeConfigs", fields("configs", settled(() -> configs(admin, resource), c -> true)));
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND))))
                    .all().get();
            print("incrementalAlterConfigs", fields("configs", settled(() -> configs(admin, resource),
                    c -> "7200000".equals(((Map<?, ?>) c.get("retention.ms")).get("value")))));

            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap))) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, 1_000_000L + i, "k" + i, "v" + i)).get();
                }
            }
            TopicPartition p0 = new TopicPartition(topic, 0);
            print("listOffsets", fields("earliest", offset(admin, p0, OffsetSpec.earliest()),
                                        "latest", offset(admin, p0, OffsetSpec.latest()),
                                        "maxTimestamp", offset(admin, p0, OffsetSpec.maxTimestamp()),
                                        "forTimestamp", offset(admin, p0, OffsetSpec.forTimestamp(1_000_004L))));
            long low = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(p0)
                    .get().lowWatermark();
            print("deleteRecords", fields("lowWatermark", low, "earliest", offset(admin, p0, OffsetSpec.earliest())));

            Collection<GroupListing> groups = admin.listGroups().all().get();
            print("listGroups", fields("groups", groups.stream()
                    .map(g -> fields("groupId", g.groupId(), "type", g.type().map(Object::toString).orElse(null),
                                     "protocol", g.protocol(),
                                     "state", g.groupState().map(Object::toString).orElse(null)))
                    .collect(Collectors.toList())));
            @SuppressWarnings("deprecation")
            Collection<org.apache.kafka.clients.admin.ConsumerGroupListing> consumerGroups =
                    admin.listConsumerGroups().all().get();
            print("listConsumerGroups", fields("groups", consumerGroups.stream()
                    .map(g -> fields("groupId", g.groupId(), "type", g.type().map(Object::toString).orElse(null),
                                     "state", g.groupState().map(Object::toString).orElse(null)))
                    .collect(Collectors.toList())));
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            print("describeConsumerGroups", fields("groupId", d.groupId(), "state", d.groupState().toString(),
                                                   "type", d.type().toString(), "members", d.members().size(),
                                                   "coordinator", d.coordinator().id()));
            print("listConsumerGroupOffsets", fields("offsets", offsets(
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get())));

            DescribeClusterResult cluster = admin.describeCluster();
            print("describeCluster", fields("clusterId", cluster.clusterId().get(),
                                            "controller", cluster.controller().get().id(),
                                            "nodes", cluster.nodes().get().stream().map(Node::id).sorted()
                                                    .collect(Collectors.toList())));
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            Map<String, Object> finalized = new TreeMap<>();
            features.finalizedFeatures().forEach((name, range) -> finalized.put(name, range.maxVersionLevel()));
            Map<String, Object> supported = new TreeMap<>();
            features.supportedFeatures().forEach((name, range) ->
                    supported.put(name, List.of(range.minVersion(), range.maxVersion())));
            print("describeFeatures", fields("finalized", finalized, "supported", supported,
                                             "epoch", features.finalizedFeaturesEpoch().orElse(-1L)));
        }
    }

    /** A broker answers from its metadata image, which follows the controller's answer by a moment (in Kafka as in
     *  kraftwire): the first of {@code read}'s results that {@code done} accepts, asked again for up to 15 s. */
    private static <T> T settled(java.util.concurrent.Callable<T> read, java.util.function.Predicate<T> done)
            throws Exception {
        long deadline = System.currentTimeMillis() + 15_000;
        while (true) {
            try {
                T value = read.call();
                if (done.test(value) || System.currentTimeMillis() > deadline) return value;
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.RetriableException)
                        || System.currentTimeMillis() > deadline) throw e;
            }
            Thread.sleep(100);
        }
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.putAll(common);
        p.put("bootstrap.servers", bootstrap);
        return Admin.create(p);
    }

    private static Map<String, Object> configs(Admin admin, ConfigResource resource) throws Exception {
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        Map<String, Object> out = new TreeMap<>();
        for (String name : List.of("retention.ms", "cleanup.policy", "segment.bytes")) {
            ConfigEntry e = config.get(name);
            out.put(name, fields("value", e.value(), "source", e.source().toString()));
        }
        return out;
    }

    private static Map<String, Object> offset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
        ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
        return fields("offset", info.offset(), "timestamp", info.timestamp());
    }
}
