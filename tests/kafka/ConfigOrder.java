// Prints, for Kafka's broker, topic and group configurations, the definition order of their keys (ConfigDef's
// LinkedHashMap, internal keys marked) and the order DescribeConfigs lists a default configuration's keys in
// (ConfigHelperUtils.createResponseConfig), one line each:
//   def <scope> <name> <internal: 0|1>
//   described <scope> <name>
// kraftwire/kafka_config_order.tsv is the "def" lines (tests/kafka/test_config_order.py checks both).
// Run: java -cp "$KAFKA_LIBS/*" tests/kafka/ConfigOrder.java
import java.util.*;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;

public class ConfigOrder {
    static void definitions(String scope, ConfigDef def) {
        for (ConfigDef.ConfigKey k : def.configKeys().values())
            System.out.println("def\t" + scope + "\t" + k.name + "\t" + (k.internalConfig ? 1 : 0));
    }

    static void described(String scope, AbstractConfig config) {
        var all = new DescribeConfigsRequestData.DescribeConfigsResource();
        var result = org.apache.kafka.server.ConfigHelperUtils.createResponseConfig(all, config,
                (name, value) -> new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(name));
        for (var entry : result.configs()) System.out.println("described\t" + scope + "\t" + entry.name());
    }

    public static void main(String[] args) {
        Properties broker = new Properties();
        broker.put("process.roles", "broker,controller");
        broker.put("node.id", "1");
        broker.put("controller.quorum.voters", "1@localhost:9093");
        broker.put("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093");
        broker.put("controller.listener.names", "CONTROLLER");
        definitions("broker", kafka.server.KafkaConfig.configDef());
        described("broker", kafka.server.KafkaConfig.fromProps(broker));
        definitions("topic", org.apache.kafka.storage.internals.log.LogConfig.configDefCopy());
        described("topic",
                org.apache.kafka.storage.internals.log.LogConfig.fromProps(new HashMap<>(), new Properties()));
        definitions("group", org.apache.kafka.coordinator.group.GroupConfig.CONFIG_DEF);
        described("group", org.apache.kafka.coordinator.group.GroupConfig.fromProps(new HashMap<>(), new Properties()));
    }
}
