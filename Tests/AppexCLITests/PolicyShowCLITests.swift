import Foundation
import Testing

/// `appex policy show` prints the liveness keys with the rest of the resolved policy.
struct PolicyShowCLITests {
    @Test func theLivenessKeysAreShown() throws {
        let r = try AppexBinary.run(["policy", "show", "com.apple.widgetkit-extension"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try r.json() as? [String: Any], "\(r.stdout)")
        let policy = try #require(json["policy"] as? [String: Any])
        // Policies/defaults.yaml: the point overrides none of them.
        #expect(policy["pingIntervalMs"] as? Int == 1000, "\(policy)")
        #expect(policy["idlePingIntervalMs"] as? Int == 30_000)
        #expect(policy["unresponsiveTimeoutMs"] as? Int == 5000)
    }
}
