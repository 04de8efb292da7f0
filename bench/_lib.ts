import { auditFigures } from './audit.js'
import { stackFigures } from './stack.js'
import { render } from './measure.js'
for (const f of await auditFigures(process.argv.includes('--quick'))) console.log(render(f))
for (const f of await stackFigures(process.argv.includes('--quick'))) console.log(render(f))
