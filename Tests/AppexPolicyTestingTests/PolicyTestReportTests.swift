import AppexPolicy
import Foundation
import Testing

@testable import AppexPolicyTesting

/// `${NAME}` variables, and the three forms of the report: lines, JSON, JUnit XML.
@Suite struct PolicyTestReportTests {
    @Test func variablesAreFoundInOrderAndSubstitutedWhenKnown() {
        #expect(PolicyTestVariables.names(in: "alloc ${memoryLimitMiB} and ${uid}") == ["memoryLimitMiB", "uid"])
        #expect(PolicyTestVariables.names(in: "no variables $uid {uid}") == [])
        #expect(PolicyTestVariables.names(in: "open ${unterminated") == ["unterminated"])
        #expect(
            PolicyTestVariables.substitute("ok uid=${uid} euid=${uid} ${other}", ["uid": "200001"])
                == "ok uid=200001 euid=200001 ${other}")
        #expect(PolicyTestVariables.isKnown("bystanderPID") && !PolicyTestVariables.isKnown("nope"))
        #expect(PolicyTestVariables.needsBystander.allSatisfy { PolicyTestVariables.isKnown($0) })
    }

    static let results = [
        PolicyTestResult(
            suite: "limits", name: "fork", file: "/t/limits.yaml", line: 12, expected: "allowed",
            verdict: .pass("ok"), milliseconds: 250),
        PolicyTestResult(
            suite: "limits", name: "a <b> & \"c\"", expected: "denied EPERM",
            verdict: .fail("errno=EACCES", "answered EACCES, expected EPERM"), milliseconds: 1500),
        PolicyTestResult(
            suite: "host", name: "nothing left behind", expected: "none", verdict: .pass("none left", "checked"),
            milliseconds: 0),
    ]

    @Test func aLinePerCaseAndASummary() {
        #expect(
            Self.results.map { PolicyTestReport.line($0) } == [
                "PASS limits: fork: expected allowed; observed ok",
                "FAIL limits: a <b> & \"c\": expected denied EPERM; observed errno=EACCES -- answered EACCES, expected EPERM",
                "PASS host: nothing left behind: expected none; observed none left (checked)",
            ])
        #expect(PolicyTestReport.summary(Self.results) == "2 passed, 1 failed")
    }

    @Test func jsonCountsAndKeepsEveryKeyOfEveryCase() throws {
        let json = PolicyTestReport.json(Self.results, notes: ["a note"])
        #expect(json["passed"] as? Int == 2 && json["failed"] as? Int == 1)
        let cases = try #require(json["cases"] as? [[String: Any]])
        #expect(cases.count == 3)
        #expect(cases[0]["line"] as? Int == 12 && cases[1]["line"] is NSNull, "a missing value is null, not left out")
        #expect(cases[1]["note"] as? String == "answered EACCES, expected EPERM")
        #expect(JSONSerialization.isValidJSONObject(json))
    }

    @Test func junitGroupsCasesBySuiteAndEscapesWhatItQuotes() throws {
        let xml = PolicyTestReport.junit(Self.results)
        #expect(xml.contains("<testsuites name=\"appex test-policy\" tests=\"3\" failures=\"1\">"))
        #expect(xml.contains("<testsuite name=\"limits\" tests=\"2\" failures=\"1\" time=\"1.75\">"))
        #expect(xml.contains("<testsuite name=\"host\" tests=\"1\" failures=\"0\" time=\"0.0\">"))
        #expect(xml.contains("<testcase classname=\"limits\" name=\"fork\" time=\"0.25\" file=\"/t/limits.yaml\" line=\"12\"/>"))
        #expect(xml.contains("name=\"a &lt;b&gt; &amp; &quot;c&quot;\""))
        #expect(xml.contains("<failure message=\"expected denied EPERM; observed errno=EACCES: answered EACCES, expected EPERM\">"))
        #expect(xml.hasSuffix("</testsuites>\n"))
    }

    @Test func controlCharactersCannotBreakTheXML() {
        #expect(PolicyTestReport.escape("a\u{1}b\tc\nd'") == "a?b\tc\nd&apos;")
    }

    @Test func caseLimitsOverrideThePolicyAndKeepSoftBelowHard() throws {
        let policy = EffectivePolicy(extensionPoint: "com.apple.share-services", in: try PolicyLocator.load()).policy
        #expect(PolicyTestLimits().isEmpty)
        #expect(PolicyTestLimits().apply(to: policy) == policy)

        let tight = PolicyTestLimits(memory: .mebibytes(4), pids: 8, files: 32, launchDeadline: .milliseconds(250)).apply(to: policy)
        #expect(tight.memory.activeHardLimit == .mebibytes(4) && tight.memory.inactiveHardLimit == .mebibytes(4))
        #expect(
            tight.memory.activeSoftLimit <= .mebibytes(4) && tight.memory.inactiveSoftLimit <= .mebibytes(4),
            "a soft limit above the hard one would never warn")
        #expect(tight.pidsLimit == 8 && tight.openFilesLimit == 32 && tight.launchDeadline == .milliseconds(250))

        let soft = PolicyTestLimits(memory: .mebibytes(64), memorySoft: .mebibytes(48)).apply(to: policy)
        #expect(soft.memory.activeSoftLimit == .mebibytes(48) && soft.memory.inactiveSoftLimit == .mebibytes(48))
        #expect(soft.pidsLimit == policy.pidsLimit, "what the case leaves out stays the policy's")
    }
}
