import AppexCommandSupport
import Testing

@testable import AppexLaunchReport

/// The terminal table every report prints, and the launch phases' order and derived start-up.
@Suite struct TextAndPhaseTests {
    @Test func tablesAlignTheFirstColumnLeftAndNumbersRight() {
        let lines = TextTable.render(headers: ["extension", "kills"], rows: [["com.example.a", "3"], ["b", "12"]])
        #expect(
            lines == [
                "  extension      kills",
                "  com.example.a      3",
                "  b                 12",
            ])
    }

    @Test func textColumnsAlignLeftWithoutTrailingSpaces() {
        let lines = TextTable.render(headers: ["id", "state"], rows: [["a", "on"], ["bbb", "x"]], indent: "", textColumns: true)
        #expect(lines == ["id   state", "a    on", "bbb  x"])
    }

    @Test func phasesComeInLaunchOrderThenUnknownOnesByName() {
        let ordered = LaunchPhaseCatalog.ordered(["total", "zeta", "checkIn", "spawn", "alpha", "clone"])
        #expect(ordered == ["clone", "spawn", "checkIn", "total", "alpha", "zeta"])
        #expect(LaunchPhaseCatalog.phase("startup")?.share == .`extension`)
        #expect(LaunchPhaseCatalog.phase("nope") == nil)
    }

    @Test func startupIsCheckInMinusSpawnAndNeverNegative() {
        #expect(LaunchPhaseCatalog.withDerived(["spawn": 300, "checkIn": 1000])["startup"] == 700)
        #expect(LaunchPhaseCatalog.withDerived(["spawn": 300, "checkIn": 200])["startup"] == 0)
        #expect(LaunchPhaseCatalog.withDerived(["spawn": 300])["startup"] == nil)
    }

    @Test func htmlEscapesMarkupAndQuotes() {
        #expect(
            HTMLPage.escape("<script>alert('x') & \"y\"</script>")
                == "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;")
        var page = HTMLPage(title: "a < b")
        page.paragraph("<b>")
        let html = page.render()
        #expect(html.contains("<title>a &lt; b</title>"))
        #expect(html.contains("&lt;b&gt;") && !html.contains("<p><b></p>"))
    }
}
