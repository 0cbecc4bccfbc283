// Binds DynamoDB Local to 127.0.0.1 only (its CLI has no bind-address option).
// testenv compiles it into .cache/emulators/dynamodb/launcher (emulators install dynamodb).
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import org.eclipse.jetty.server.*;
public class DdbLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer p = ServerRunner.createServerFromCommandLineArgs(args);
    java.lang.reflect.Field f = DynamoDBProxyServer.class.getDeclaredField("server");
    f.setAccessible(true);
    for (Connector c : ((Server) f.get(p)).getConnectors())
      if (c instanceof ServerConnector) ((ServerConnector) c).setHost("127.0.0.1");
    p.start(); p.join();
  }
}
