// Prints the configuration definitions of the Kafka release on the classpath as tab-separated facts, one key a line:
//   scope  name  type  default  validator  importance  dynamic  synonyms  described
// scope is broker, topic or group; dynamic is Kafka's update mode of a broker key (read-only, per-broker,
// cluster-wide); synonyms are a topic key's broker keys in the order Kafka resolves its value (hours/minutes keys
// carry their unit after a colon); described are the broker keys DescribeConfigs lists as the topic key's synonyms. kraftwire's kraftwire/config_table.tsv is generated from this output
// (python -m kraftwire.tools.generate_configs); the oracle test compares the two.
// Run: java -cp "$KAFKA_LIBS/*" tests/kafka/DumpConfigs.java
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;

public class DumpConfigs {
    static String text(Object o) {
        if (o == null) return "null";
        if (o instanceof List<?> l) {
            StringBuilder b = new StringBuilder();
            for (Object item : l) { if (b.length() > 0) b.append(','); b.append(item); }
            return b.toString();
        }
        if (o instanceof org.apache.kafka.common.config.types.Password) return "[hidden]";
        if (o instanceof Class<?> c) return c.getName();
        return o.toString().replace("\t", " ").replace("\n", " ");
    }

    static ConfigDef staticDef(Class<?> cls) throws Exception {
        ConfigDef found = null;
        for (Field f : cls.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && ConfigDef.class.isAssignableFrom(f.getType())) {
                f.setAccessible(true);
                ConfigDef d = (ConfigDef) f.get(null);
                if (found == null || d.configKeys().size() > found.configKeys().size()) found = d;
            }
        }
        if (found == null) throw new IllegalStateException("no ConfigDef in " + cls);
        return found;
    }

    static void dump(String scope, ConfigDef def, Map<String, String> modes, Map<String, List<String>> synonyms,
                     Map<String, List<String>> described) {
        TreeMap<String, ConfigDef.ConfigKey> keys = new TreeMap<>(def.configKeys());
        for (ConfigDef.ConfigKey k : keys.values()) {
            if (k.internalConfig) continue;
            String dflt = k.hasDefault() ? text(k.defaultValue) : "(none)";
            String validator = k.validator == null ? "" : text(k.validator);
            String mode = scope.equals("broker") ? modes.getOrDefault(k.name, "read-only") : "";
            String syn = String.join(",", synonyms.getOrDefault(k.name, List.of()));
            System.out.println(String.join("\t", scope, k.name, k.type.name(), dflt, validator,
                    k.importance.name(), mode, syn, String.join(",", described.getOrDefault(k.name, List.of()))));
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        ConfigDef broker = staticDef(Class.forName("org.apache.kafka.server.config.AbstractKafkaConfig"));
        Map<String, String> modes = (Map<String, String>) Class.forName("org.apache.kafka.server.config.DynamicBrokerConfig")
                .getMethod("dynamicConfigUpdateModes").invoke(null);
        dump("broker", broker, modes, Map.of(), Map.of());

        Map<String, List<?>> raw = (Map<String, List<?>>) Class.forName("org.apache.kafka.server.config.ServerTopicConfigSynonyms")
                .getField("ALL_TOPIC_CONFIG_SYNONYMS").get(null);
        Object hours = Class.forName("org.apache.kafka.server.config.ConfigSynonym").getField("HOURS_TO_MILLISECONDS").get(null);
        Object minutes = Class.forName("org.apache.kafka.server.config.ConfigSynonym").getField("MINUTES_TO_MILLISECONDS").get(null);
        Map<String, List<String>> synonyms = new HashMap<>();
        for (Map.Entry<String, List<?>> e : raw.entrySet()) {
            List<String> names = new ArrayList<>();
            for (Object s : e.getValue()) {
                String name = (String) s.getClass().getMethod("name").invoke(s);
                Object conv = s.getClass().getMethod("converter").invoke(s);
                names.add(conv == hours ? name + ":hours" : conv == minutes ? name + ":minutes" : name);
            }
            synonyms.put(e.getKey(), names);
        }
        Class<?> topicSynonyms = Class.forName("org.apache.kafka.server.config.ServerTopicConfigSynonyms");
        java.lang.reflect.Method serverSynonym = topicSynonyms.getMethod("serverSynonym", String.class);
        java.lang.reflect.Method brokerSynonyms = Class.forName("org.apache.kafka.server.config.DynamicBrokerConfig")
                .getMethod("brokerConfigSynonyms", String.class, boolean.class);
        Map<String, List<String>> described = new HashMap<>();
        for (String topicKey : synonyms.keySet()) {
            String primary = (String) serverSynonym.invoke(null, topicKey);
            described.put(topicKey, (List<String>) brokerSynonyms.invoke(null, primary, false));
        }
        dump("topic", staticDef(Class.forName("org.apache.kafka.storage.internals.log.LogConfig")), Map.of(), synonyms, described);
        dump("group", staticDef(Class.forName("org.apache.kafka.coordinator.group.GroupConfig")), Map.of(), Map.of(), Map.of());
    }
}
