import ArgumentParser

@main
struct Appex: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appex",
        abstract: "Install, validate, run and inspect Linux app extensions (.appex bundles).",
        subcommands: [
            ValidateCommand.self,
            InfoCommand.self,
            PolicyCommand.self,
            ActivationCommand.self, ExtensionsForCommand.self,
            RunCommand.self,
        ]
    )
}
