import java.util.TreeSet;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Reads the MBeans matching a pattern from a running Kafka over JMX (the node started with
 * com.sun.management.jmxremote on the given port): one line per MBean, "name :: attribute=value,attribute=value,"
 * in the order Kafka's MBean lists its attributes, the lines sorted.
 *
 * Usage: ReadMBeans port objectNamePattern
 */
public class ReadMBeans {
    public static void main(String[] args) throws Exception {
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + args[0] + "/jmxrmi");
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection server = connector.getMBeanServerConnection();
            TreeSet<String> lines = new TreeSet<>();
            for (ObjectName name : server.queryNames(new ObjectName(args[1]), null)) {
                StringBuilder line = new StringBuilder(name.toString()).append(" :: ");
                for (MBeanAttributeInfo attribute : server.getMBeanInfo(name).getAttributes()) {
                    line.append(attribute.getName()).append('=')
                        .append(server.getAttribute(name, attribute.getName())).append(',');
                }
                lines.add(line.toString());
            }
            lines.forEach(System.out::println);
        }
    }
}
