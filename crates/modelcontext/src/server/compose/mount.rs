//! An upstream mounted in a server: what it serves, imported through a transform into the
//! server's catalog as one change, imported again when the upstream says its lists changed
//! (or reconnects), and the resources clients subscribe to watched upstream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use modelcontext_types::uri_template::UriTemplate;
use modelcontext_types::{
    ClientRequest, Prompt, PromptReference, Reference, Resource, ResourceTemplate,
    ResourceTemplateReference, ServerNotification, SubscriptionFilter, Tool, method,
};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use super::forward;
use super::transform::Transform;
use super::upstream::{Announcement, Upstream};
use crate::Error;
use crate::client::Client;
use crate::server::middleware::{Next, Request, Response};
use crate::server::resource::TemplateEntry;
use crate::server::schema::SchemaLimits;
use crate::server::tool::ToolEntry;
use crate::server::{
    Catalog, ChangeEvent, PromptDef, ResourceDef, SubscriptionBus, TaskSupport, ToolDef,
    change_catalog,
};

/// One upstream as one server shows it.
pub(super) struct Mounted {
    upstream: Upstream,
    transform: Arc<Transform>,
    catalog: Arc<RwLock<Arc<Catalog>>>,
    bus: Arc<dyn SubscriptionBus>,
    limits: SchemaLimits,
    /// What this mount put in the catalog, replaced whole by each import.
    owned: Mutex<Owned>,
    /// The upstream subscriptions kept for resources clients subscribed to, by shown URI.
    watched: Mutex<HashMap<String, Watch>>,
}

/// An upstream subscription kept for a resource clients subscribed to.
struct Watch {
    task: JoinHandle<()>,
    /// `true` once the upstream answered the subscription (or refused it).
    made: watch::Receiver<bool>,
}

/// The catalog keys of one import, and the templates, whose URIs it matches.
#[derive(Default)]
struct Owned {
    tools: Vec<String>,
    /// The scopes of the tools that need some, by shown name: hidden from a caller without
    /// them, as their calls are refused.
    scoped: HashMap<String, Vec<String>>,
    resources: Vec<String>,
    templates: Vec<Arc<TemplateEntry>>,
    prompts: Vec<String>,
}

/// What one import found, ready for the catalog.
struct Imported {
    tools: Vec<Arc<ToolEntry>>,
    resources: Vec<Arc<ResourceDef>>,
    templates: Vec<Arc<TemplateEntry>>,
    prompts: Vec<Arc<PromptDef>>,
}

/// Everything an upstream lists, every page.
struct Listed {
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    tasks: bool,
    completions: bool,
}

impl Mounted {
    pub(super) fn new(
        upstream: Upstream,
        transform: Transform,
        catalog: Arc<RwLock<Arc<Catalog>>>,
        bus: Arc<dyn SubscriptionBus>,
        limits: SchemaLimits,
    ) -> Arc<Mounted> {
        Arc::new(Mounted {
            upstream,
            transform: Arc::new(transform),
            catalog,
            bus,
            limits,
            owned: Mutex::default(),
            watched: Mutex::default(),
        })
    }

    /// Imports what the upstream serves now, replacing the last import in one change.
    pub(super) async fn import(&self) -> Result<(), Error> {
        let client = self.upstream.client().await.map_err(Error::negotiation)?;
        let listed = list_everything(&client).await?;
        drop(client);
        let imported = self.prepare(listed)?;
        self.publish(imported)
    }

    /// Follows the upstream's announcements until the mount or the upstream is gone.
    pub(super) fn follow(self: &Arc<Mounted>) {
        let announcements = self.upstream.follow();
        tokio::spawn(follow(Arc::downgrade(self), announcements));
    }

    fn prepare(&self, listed: Listed) -> Result<Imported, Error> {
        let mut imported =
            Imported { tools: vec![], resources: vec![], templates: vec![], prompts: vec![] };
        for tool in listed.tools {
            let Some((shown, route, scopes)) = self.transform.tool(tool) else { continue };
            let handler = forward::tool(self.upstream.clone(), route);
            let mut def = ToolDef::forwarding(shown, handler).required_scopes(scopes);
            if listed.tasks {
                def = def.task(TaskSupport::Optional);
            }
            imported
                .tools
                .push(Arc::new(ToolEntry::compile(def, self.limits).map_err(Error::registration)?));
        }
        for resource in listed.resources {
            let handler = forward::resource(self.upstream.clone(), Arc::clone(&self.transform));
            let shown = self.transform.resource(resource);
            imported.resources.push(Arc::new(ResourceDef::forwarding_resource(shown, handler)));
        }
        for template in listed.templates {
            let handler = forward::resource(self.upstream.clone(), Arc::clone(&self.transform));
            let reference =
                Reference::Resource(ResourceTemplateReference::new(&template.uri_template));
            let shown = self.transform.template(template);
            let parsed = UriTemplate::parse(&shown.uri_template).map_err(|e| {
                Error::registration(format!("resource template '{}': {e}", shown.uri_template))
            })?;
            let variables: Vec<&str> = parsed.variables().collect();
            let mut def = ResourceDef::forwarding_template(shown.clone(), &variables, handler);
            if listed.completions {
                for variable in &variables {
                    let completer = forward::completer(
                        self.upstream.clone(),
                        reference.clone(),
                        (*variable).to_owned(),
                    );
                    def = def.complete(*variable, completer);
                }
            }
            imported
                .templates
                .push(Arc::new(TemplateEntry::compile(def).map_err(Error::registration)?));
        }
        for prompt in listed.prompts {
            let Some((shown, upstream_name)) = self.transform.prompt(prompt) else { continue };
            let reference = Reference::Prompt(PromptReference::new(&upstream_name));
            let arguments: Vec<String> =
                shown.arguments.iter().flatten().map(|a| a.name.clone()).collect();
            let handler = forward::prompt(self.upstream.clone(), upstream_name);
            let mut def = PromptDef::forwarding(shown, handler);
            if listed.completions {
                for argument in arguments {
                    let completer = forward::completer(
                        self.upstream.clone(),
                        reference.clone(),
                        argument.clone(),
                    );
                    def = def.complete(argument, completer);
                }
            }
            imported.prompts.push(Arc::new(def));
        }
        Ok(imported)
    }

    /// Replaces the last import with `imported` in one catalog change, then tells clients.
    fn publish(&self, imported: Imported) -> Result<(), Error> {
        let mut owned = self.owned.lock().unwrap_or_else(|e| e.into_inner());
        let scoped = imported.tools.iter().filter(|t| !t.def.required_scopes.is_empty());
        let next = Owned {
            tools: imported.tools.iter().map(|t| t.def.tool.name.clone()).collect(),
            scoped: scoped
                .map(|t| (t.def.tool.name.clone(), t.def.required_scopes.clone()))
                .collect(),
            resources: imported.resources.iter().map(|r| r.uri.clone()).collect(),
            templates: imported.templates.clone(),
            prompts: imported.prompts.iter().map(|p| p.prompt.name.clone()).collect(),
        };
        change_catalog(&self.catalog, |catalog| {
            for name in &owned.tools {
                catalog.tools.remove(name);
            }
            for uri in &owned.resources {
                catalog.resources.remove(uri);
            }
            for template in &owned.templates {
                catalog.templates.remove(&template.def.uri);
            }
            for name in &owned.prompts {
                catalog.prompts.remove(name);
            }
            for tool in imported.tools {
                let name = tool.def.tool.name.clone();
                catalog.tools.insert("tool", &name, tool)?;
            }
            for resource in imported.resources {
                let uri = resource.uri.clone();
                catalog.resources.insert("resource", &uri, resource)?;
            }
            for template in imported.templates {
                let uri = template.def.uri.clone();
                catalog.templates.insert("resource template", &uri, template)?;
            }
            for prompt in imported.prompts {
                let name = prompt.prompt.name.clone();
                catalog.prompts.insert("prompt", &name, prompt)?;
            }
            Ok(())
        })?;
        *owned = next;
        drop(owned);
        self.bus.publish(ChangeEvent::ToolsListChanged);
        self.bus.publish(ChangeEvent::ResourcesListChanged);
        self.bus.publish(ChangeEvent::PromptsListChanged);
        Ok(())
    }

    /// Whether `uri` (as shown) is one of this mount's resources or matches its templates.
    fn owns_resource(&self, uri: &str) -> bool {
        let owned = self.owned.lock().unwrap_or_else(|e| e.into_inner());
        owned.resources.iter().any(|r| r == uri)
            || owned.templates.iter().any(|t| t.match_uri(uri).is_some())
    }

    /// Starts watching `uri` upstream for a client's subscription (once per URI); what says
    /// when the upstream subscription is made, if `uri` is this mount's.
    fn watch(self: &Arc<Mounted>, uri: &str) -> Option<watch::Receiver<bool>> {
        if !self.owns_resource(uri) {
            return None;
        }
        let upstream_uri = self.transform.upstream_uri(uri)?;
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = watched.get(uri).filter(|kept| !kept.task.is_finished()) {
            return Some(kept.made.clone());
        }
        let (tell, made) = watch::channel(false);
        let watching = watch_resource(Arc::downgrade(self), uri.to_owned(), upstream_uri, tell);
        let task = tokio::spawn(watching);
        watched.insert(uri.to_owned(), Watch { task, made: made.clone() });
        Some(made)
    }

    fn unwatch(&self, uri: &str) {
        if let Some(kept) = self.watched.lock().unwrap_or_else(|e| e.into_inner()).remove(uri) {
            kept.task.abort();
        }
    }

    /// After a reconnection the upstream has forgotten the subscriptions: make them again.
    fn rewatch(self: &Arc<Mounted>) {
        let uris: Vec<String> =
            self.watched.lock().unwrap_or_else(|e| e.into_inner()).keys().cloned().collect();
        for uri in uris {
            self.unwatch(&uri);
            let _made = self.watch(&uri);
        }
    }

    /// The methods [`Mounted::see_requests`] looks at; requests of others do not pass it.
    pub(super) const SEEN_METHODS: &'static [&'static str] = &[
        method::RESOURCES_SUBSCRIBE,
        method::RESOURCES_UNSUBSCRIBE,
        method::SUBSCRIPTIONS_LISTEN,
        method::TOOLS_LIST,
    ];

    /// Sees the subscriptions clients make, to make them upstream too, and hides from a
    /// tool list the tools its caller lacks the scopes to call; lets every request through.
    pub(super) async fn see_requests(self: Arc<Mounted>, request: Request, next: Next) -> Response {
        let made: Vec<watch::Receiver<bool>> = match request.request() {
            ClientRequest::Subscribe(params) => self.watch(&params.uri).into_iter().collect(),
            ClientRequest::Unsubscribe(params) => {
                self.unwatch(&params.uri);
                Vec::new()
            }
            ClientRequest::SubscriptionsListen(params) => {
                let uris = params.notifications.resource_subscriptions.iter().flatten();
                uris.filter_map(|uri| self.watch(uri)).collect()
            }
            _ => Vec::new(),
        };
        // The caller's subscription is answered once the upstream's is made, so that an
        // update the upstream sends after the answer reaches the caller.
        for made in made {
            made_upstream(made, self.upstream.call_timeout()).await;
        }
        let granted = match request.request() {
            ClientRequest::ListTools(_) => granted_scopes(&request),
            _ => None,
        };
        let response = next.run(request).await;
        match granted {
            Some(granted) => response.map_result(|page| self.without_unreachable(page, &granted)),
            None => response,
        }
    }

    /// `page` (a `tools/list` result) without the tools that need scopes `granted` lacks.
    fn without_unreachable(
        &self,
        mut page: Map<String, Value>,
        granted: &[String],
    ) -> Map<String, Value> {
        let owned = self.owned.lock().unwrap_or_else(|e| e.into_inner());
        let reachable = |tool: &Value| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            owned.scoped.get(name).is_none_or(|needed| needed.iter().all(|s| granted.contains(s)))
        };
        if let Some(Value::Array(tools)) = page.get_mut("tools") {
            tools.retain(reachable);
        }
        page
    }
}

/// The scopes the request's access token grants; `None` when no token was checked (no
/// resource server in front), where no call is refused for its scopes either.
fn granted_scopes(request: &Request) -> Option<Vec<String>> {
    #[cfg(feature = "auth-server")]
    if let Some(principal) = request.extensions().get::<crate::auth::Principal>() {
        return Some(principal.scopes.clone());
    }
    let _ = request;
    None
}

async fn follow(mounted: Weak<Mounted>, mut announcements: broadcast::Receiver<Announcement>) {
    loop {
        let announcement = match announcements.recv().await {
            Ok(announcement) => announcement,
            // Some were missed: importing again covers whatever they said.
            Err(broadcast::error::RecvError::Lagged(_)) => Announcement::ToolsChanged,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(mounted) = mounted.upgrade() else { return };
        let announced = mounted.upstream.announced();
        if let Err(error) = mounted.import().await {
            tracing::warn!(upstream = %mounted.upstream.name(), %error, "import after a change failed; keeping the last one");
        }
        mounted.upstream.imported(announced);
        if matches!(announcement, Announcement::Reconnected) {
            mounted.rewatch();
        }
    }
}

/// Waits until `made` says the upstream subscription is made, or its watch ended, at most
/// `bound`.
async fn made_upstream(mut made: watch::Receiver<bool>, bound: Duration) {
    let _ = tokio::time::timeout(bound, made.wait_for(|made| *made)).await;
}

/// Keeps an upstream subscription to `upstream_uri` and tells the server's clients of each
/// update under `shown`; `made` is told once the upstream answered. Ends with the connection
/// (a reconnection makes it again).
async fn watch_resource(
    mounted: Weak<Mounted>,
    shown: String,
    upstream_uri: String,
    made: watch::Sender<bool>,
) {
    let Some(upstream) = mounted.upgrade().map(|m| m.upstream.clone()) else { return };
    let Ok(client) = upstream.client().await else { return };
    let filter = SubscriptionFilter::default().with_resource_subscriptions(vec![upstream_uri]);
    let subscription = client.listen(filter).await;
    let _ = made.send(true);
    drop(client);
    let mut subscription = match subscription {
        Ok(subscription) => subscription,
        Err(error) => {
            tracing::info!(upstream = %upstream.name(), %error, uri = %shown, "upstream subscription refused");
            return;
        }
    };
    while let Some(notification) = subscription.next().await {
        let Some(mounted) = mounted.upgrade() else { return };
        if let ServerNotification::ResourceUpdated(_) = notification {
            mounted.bus.publish(ChangeEvent::ResourceUpdated(shown.clone()));
        }
    }
}

/// Every page of every list the upstream declares.
async fn list_everything(client: &Client) -> Result<Listed, Error> {
    let capabilities = client.server_capabilities().clone();
    let tasks = capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(modelcontext_types::TASKS_EXTENSION));
    let tools = match capabilities.tools {
        Some(_) => client.list_all_tools().await?,
        None => Vec::new(),
    };
    let (mut resources, mut templates) = (Vec::new(), Vec::new());
    if capabilities.resources.is_some() {
        let mut cursor = None;
        loop {
            let page = client.list_resources(cursor).await?;
            resources.extend(page.resources);
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        loop {
            let page = client.list_resource_templates(cursor).await?;
            templates.extend(page.resource_templates);
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
    }
    let mut prompts = Vec::new();
    if capabilities.prompts.is_some() {
        let mut cursor = None;
        loop {
            let page = client.list_prompts(cursor).await?;
            prompts.extend(page.prompts);
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
    }
    let completions = capabilities.completions.is_some();
    Ok(Listed { tools, resources, templates, prompts, tasks, completions })
}
