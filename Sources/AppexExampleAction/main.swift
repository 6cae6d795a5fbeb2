// The example action extension (Action.appex): transforms the text it is given and returns
// it, as an action extension hands its result back to the host. Built on AppexExtensionKit.
import AppexExtensionKit

AppexExtension.main(handler: UppercaseAction())
