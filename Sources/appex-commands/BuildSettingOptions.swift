import ArgumentParser

/// `--define NAME=VALUE`: Xcode build settings to substitute into `$(NAME)` references, so a
/// source Info.plist can be checked as the built product would be.
struct BuildSettingOptions: ParsableArguments {
    @Option(
        name: [.customLong("define"), .customShort("D")],
        help: ArgumentHelp("Substitute an Xcode build setting, e.g. -D PRODUCT_BUNDLE_IDENTIFIER=com.example.app.share", valueName: "NAME=VALUE"))
    var defines: [String] = []

    func settings() throws -> [String: String] {
        var out: [String: String] = [:]
        for d in defines {
            guard let eq = d.firstIndex(of: "="), eq != d.startIndex else {
                throw ValidationError("--define expects NAME=VALUE, got \"\(d)\"")
            }
            out[String(d[..<eq])] = String(d[d.index(after: eq)...])
        }
        return out
    }
}
