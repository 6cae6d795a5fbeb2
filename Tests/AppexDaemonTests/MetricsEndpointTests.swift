import AppexPolicy
import AppexTestSupport
import Testing

@testable import AppexDaemon

/// `--metrics` and the configuration's `metrics` key.
@Suite struct MetricsEndpointTests {
    @Test(arguments: [
        ("off", MetricsEndpoint.off),
        ("127.0.0.1:9464", .listen(host: "127.0.0.1", port: 9464)),
        ("0.0.0.0:0", .listen(host: "0.0.0.0", port: 0)),
        ("localhost:65535", .listen(host: "localhost", port: 65535)),
        ("[::1]:9464", .listen(host: "::1", port: 9464)),
        ("[::ffff:127.0.0.1]:80", .listen(host: "::ffff:127.0.0.1", port: 80)),
    ])
    func parses(_ case_: (String, MetricsEndpoint)) {
        #expect(MetricsEndpoint(parsing: case_.0) == case_.1)
        #expect(case_.1.description == case_.0)
    }

    @Test(arguments: [
        "", "on", "OFF", "9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
        "127.0.0.1:+80", "127.0.0.1:٣", "::1:9464", "[::1]", "[]:80", "[::1:80", "[host]:80",
        "a b:80", "host/x:80", "127.0.0.1:9464 ",
    ])
    func refuses(_ text: String) {
        #expect(MetricsEndpoint(parsing: text) == nil)
    }

    @Test func theDefaultIsLoopback() throws {
        #expect(DaemonConfiguration().metrics == .listen(host: "127.0.0.1", port: 9464))
        let shipped = try DaemonConfiguration.load(path: Corpus.packageRoot + "/Docs/appexd.yaml", explicit: true)
        #expect(shipped.metrics == .default)
    }

    @Test func theConfigurationKey() throws {
        #expect(try DaemonConfiguration.parse("metrics: off\n", file: "appexd.yaml").metrics == .off)
        #expect(
            try DaemonConfiguration.parse("metrics: \"[::1]:9000\"\n", file: "appexd.yaml").metrics
                == .listen(host: "::1", port: 9000))
        let error = #expect(throws: PolicyError.self) {
            try DaemonConfiguration.parse("hosts: []\nmetrics: 9464\n", file: "appexd.yaml")
        }
        #expect(error?.line == 2)
        #expect(error?.key == "metrics")
        #expect(error?.message.contains("expected HOST:PORT") == true, "\(error?.description ?? "")")
    }
}
