// A LangChain zod tool that records the input it runs with (after zod has stripped what its
// schema does not declare), for the middleware's tests.
import { tool } from '@langchain/core/tools'
import { z } from 'zod'

export const recordingRead = () => {
  const received: Array<unknown> = []
  const read = tool(
    async (input) => {
      received.push(input)
      return `read ${input.path}`
    },
    {
      name: 'read',
      description: 'Reads a file',
      schema: z.object({ path: z.string(), offset: z.number().optional() }),
    },
  )
  return { read, received }
}
