// Loopback runs DynamoDB Local listening on 127.0.0.1 only.
//
// DynamoDB Local 1.25.1 has no option for the address it listens on: its
// Jetty server is made with a port alone, which binds every interface
// (*:PORT in `ss -ltn`), so a test's server would answer the network. This
// launcher builds the server as DynamoDB Local's own main does, from the
// same command-line arguments, sets the host of its Jetty connectors to
// 127.0.0.1, and starts it. It reaches the Jetty server through a private
// field (DynamoDBProxyServer.server), so it is checked again when the
// pinned version changes (scripts/with-dynamodb.sh fails when the field is
// gone). Java runs it from source (java Loopback.java), with the jar on the
// class path.
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class Loopback {
	public static void main(String[] args) throws Exception {
		DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
		Field field = DynamoDBProxyServer.class.getDeclaredField("server");
		field.setAccessible(true);
		Server server = (Server) field.get(proxy);
		for (Connector c : server.getConnectors()) {
			((ServerConnector) c).setHost("127.0.0.1");
		}
		proxy.start();
	}
}
